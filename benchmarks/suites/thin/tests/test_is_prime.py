from programs.is_prime import is_prime
def test_prime():
    assert is_prime(7)
    assert not is_prime(9)
