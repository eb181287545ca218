from programs.unbox import Box, unbox


def test_unbox():
    assert unbox(Box(3)) == 3
