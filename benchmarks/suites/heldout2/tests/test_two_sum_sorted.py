from programs.two_sum_sorted import two_sum_sorted
def test_two_sum_sorted():
    assert two_sum_sorted([1, 2, 4, 7], 6) == (1, 2)
