from programs.gcd import gcd
def test_gcd():
    assert gcd(18, 12) == 6
