from programs.is_sorted import is_sorted
def test_sorted():
    assert not is_sorted([1, 3, 2])
