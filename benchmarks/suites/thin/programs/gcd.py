def gcd(a, b):
    while b:
        a, b = b, b % a
    return a
