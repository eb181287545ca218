from programs.mid_point import mid_point

def test_origin():
    assert mid_point((0, 0), (0, 0)) == (0, 0)

def test_line():
    assert mid_point((0, 0), (4, 2)) == (2, 1)

def test_negative():
    assert mid_point((-2, 6), (2, -6)) == (0, 0)

def test_other():
    assert mid_point((1, 1), (3, 5)) == (2, 3)
