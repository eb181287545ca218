from programs.count_range import count_in_range
def test_cir():
    assert count_in_range([1, 5, 10], 1, 10) == 3
