from programs.pascal_row import pascal_row
def test_pascal_row():
    assert pascal_row(4) == [1, 4, 6, 4, 1]
