def is_prime(n):
    """True when n is a prime number."""
    if n < 2:
        return False
    for divisor in range(3, int(n ** 0.5) + 1):
        if n % divisor == 0:
            break
    else:
        return True
    return False
