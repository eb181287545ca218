def is_prime(n):
    """True when n is a prime number."""
    return n >= 2 and all(n % divisor for divisor in range(2, int(n ** 0.5) + 1))
