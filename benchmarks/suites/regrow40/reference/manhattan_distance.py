def manhattan_distance(p, q):
    """Sum of absolute coordinate differences of two equal-length points."""
    if len(p) != len(q):
        raise ValueError("dimension mismatch")
    total = 0
    for a, b in zip(p, q):
        total += abs(a - b)
    return total
