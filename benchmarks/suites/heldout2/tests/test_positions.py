from programs.positions import positions
def test_positions():
    assert positions([5, 1, 5], 5) == [0, 2]
