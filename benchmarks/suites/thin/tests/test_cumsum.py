from programs.cumsum import cumsum
def test_cs():
    assert cumsum([1, 2, 3]) == [1, 3, 6]
