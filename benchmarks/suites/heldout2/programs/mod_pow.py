def mod_pow(base, exp, mod):
    result = 1
    base %= mod
    while exp > 0:
        if exp % 2 == 0:
            result = result * base % mod
        base = base * base % mod
        exp //= 2
    return result
