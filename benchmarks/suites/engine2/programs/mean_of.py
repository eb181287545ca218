def mean_of(values):
    """The arithmetic mean; ValueError for no values."""
    values = list(values)
    return sum(values) / len(values)
