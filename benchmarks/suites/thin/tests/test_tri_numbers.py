from programs.tri_numbers import tri_numbers
def test_tri():
    assert tri_numbers(4) == [1, 3, 6, 10]
