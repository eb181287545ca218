def sum_multiples(limit):
    """Sum of the natural numbers below limit that are multiples of 3 or 5."""
    return sum(k for k in range(limit) if k % 3 == 0 or k % 5 == 0)
