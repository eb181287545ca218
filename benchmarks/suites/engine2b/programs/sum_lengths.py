def sum_lengths(names):
    """Total length of the names; missing names (None) count nothing."""
    total = 0
    for name in names:
        total += len(name)
    return total
