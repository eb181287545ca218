from programs.bounds_check import bounds_check

def test_inside():
    assert bounds_check(5, 0, 10) == 5

def test_low():
    assert bounds_check(-1, 0, 10) == 0

def test_high():
    assert bounds_check(11, 0, 10) == 10

def test_edges():
    assert bounds_check(0, 0, 10) == 0
    assert bounds_check(10, 0, 10) == 10
