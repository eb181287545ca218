from math import gcd


def reduce_fraction(num, den):
    g = gcd(num, den)
    num, den = num // g, den // g
    if den < 0:
        num, den = -num, -den
    return num, den
