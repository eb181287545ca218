def find_index(xs, target):
    """Index of the first occurrence of target, or -1."""
    i = 0
    while i < len(xs):
        if xs[i] == target:
            return i
        i += 1
    return -1
