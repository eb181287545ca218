def positions(xs, target):
    """Indices at which target occurs in xs."""
    return [i for i, x in enumerate(xs) if x == target]
