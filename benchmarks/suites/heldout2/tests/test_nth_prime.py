from programs.nth_prime import nth_prime
def test_nth_prime():
    assert nth_prime(1) == 2
    assert nth_prime(5) == 11
