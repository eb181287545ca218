from programs.rotate import rotate
def test_rot():
    assert rotate([1, 2, 3, 4], 1) == [2, 3, 4, 1]
