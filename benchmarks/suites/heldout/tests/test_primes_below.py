from programs.primes_below import primes_below
def test_primes_below():
    assert primes_below(10) == [2, 3, 5, 7]
    assert primes_below(5) == [2, 3]
