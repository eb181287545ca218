def moving_sum(xs, k):
    """Sums of every window of k consecutive items."""
    if k <= 0:
        raise ValueError("k must be positive")
    out = []
    for i in range(len(xs) - k):
        out.append(sum(xs[i:i + k]))
    return out
