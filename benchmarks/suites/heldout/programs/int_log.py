def int_log(n, base):
    k = 0
    while n > base:
        n //= base
        k += 1
    return k
