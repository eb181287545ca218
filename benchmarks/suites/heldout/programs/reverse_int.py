def reverse_int(n):
    r, m = 0, abs(n)
    while m > 0:
        r = r * 10 + m // 10
        m //= 10
    return r if n >= 0 else -r
