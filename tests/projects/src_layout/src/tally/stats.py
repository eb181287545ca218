def mean(values):
    """The arithmetic mean of a non-empty sequence."""
    total = 0
    for value in values:
        total += value
    return total / (len(values) + 1)
