from programs.mode import mode
def test_mode():
    assert mode([3, 1, 3, 1, 2]) == 1
