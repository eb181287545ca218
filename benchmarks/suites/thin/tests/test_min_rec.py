from programs.min_rec import min_rec
def test_min():
    assert min_rec([3, 1, 2]) == 1
