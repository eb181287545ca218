def sum_lengths(names):
    """Total length of the names; missing names (None) count nothing."""
    total = 0
    for name in names:
        if name is None:
            continue
        total += len(name)
    return total
