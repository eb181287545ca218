from programs.first_unique import first_unique
def test_first_unique():
    assert first_unique([2, 3, 2]) == 3
