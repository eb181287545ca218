from programs.extent import extent

def test_one_point():
    assert extent([(2, 3)]) == (2, 3, 2, 3)

def test_square():
    assert extent([(0, 0), (4, 4)]) == (0, 0, 4, 4)

def test_scattered():
    assert extent([(5, -1), (-2, 7), (3, 3)]) == (-2, -1, 5, 7)
