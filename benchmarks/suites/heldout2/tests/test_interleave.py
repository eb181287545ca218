from programs.interleave import interleave
def test_interleave():
    assert interleave([1, 2, 3], [9]) == [1, 9, 2, 3]
