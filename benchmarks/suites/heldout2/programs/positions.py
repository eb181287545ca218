def positions(xs, target):
    """Indices at which target occurs in xs."""
    return [i for i, x in enumerate(xs, 1) if x == target]
