def two_sum_sorted(xs, target):
    """Indices (i, j), i < j, of two values of sorted xs that add up to target."""
    i, j = 0, len(xs) - 1
    while i < j:
        s = xs[i] + xs[j]
        if s == target:
            return i, j
        if s > target:
            i += 1
        else:
            j -= 1
    return None
