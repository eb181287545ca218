def trimmed_mean(xs):
    """Mean after dropping one smallest and one largest value."""
    if len(xs) < 3:
        return None
    s = sorted(xs)[1:-1]
    return sum(s) / len(s)
