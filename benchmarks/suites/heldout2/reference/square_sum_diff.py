def square_sum_diff(n):
    """(1 + ... + n)**2 - (1**2 + ... + n**2)."""
    total = sum(range(1, n + 1))
    squares = sum(k * k for k in range(1, n + 1))
    return total * total - squares
