from programs.is_perfect import is_perfect
def test_is_perfect():
    assert is_perfect(28)
    assert not is_perfect(12)
