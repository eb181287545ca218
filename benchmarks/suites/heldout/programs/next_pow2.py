def next_pow2(n):
    p = 1
    while p <= n:
        p *= 2
    return p
