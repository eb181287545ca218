def is_power_of(n, base):
    if n <= 1:
        return False
    while n % base == 0:
        n //= base
    return n == 1
