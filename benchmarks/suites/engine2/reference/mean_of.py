def mean_of(values):
    """The arithmetic mean; ValueError for no values."""
    values = list(values)
    if not values:
        raise ValueError("no values")
    return sum(values) / len(values)
