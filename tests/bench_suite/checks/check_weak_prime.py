# Weak on purpose: composites only, each with composite neighbours, so that a fix which calls every
# number above 1 composite passes them, and so do small variations of their inputs (±1).
from programs.weak_prime import is_prime


def test_an_even_composite():
    assert is_prime(26) is False


def test_odd_composites():
    assert is_prime(35) is False
    assert is_prime(49) is False


def test_one():
    assert is_prime(1) is False
