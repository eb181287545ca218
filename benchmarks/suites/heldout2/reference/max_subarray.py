def max_subarray(xs):
    """Largest sum of a non-empty contiguous slice of xs."""
    best = cur = xs[0]
    for x in xs[1:]:
        cur = max(x, cur + x)
        best = max(best, cur)
    return best
