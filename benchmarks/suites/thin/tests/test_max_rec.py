from programs.max_rec import max_rec
def test_max():
    assert max_rec([3, 1, 2]) == 3
    assert max_rec([1, 7]) == 7
