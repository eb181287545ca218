from programs.count_divisors import count_divisors
def test_count_divisors():
    assert count_divisors(12) == 6
    assert count_divisors(16) == 5
