def longest_run(xs):
    """Length of the longest strictly increasing run of adjacent elements."""
    if not xs:
        return 0
    best = cur = 0
    for i in range(1, len(xs)):
        if xs[i] > xs[i - 1]:
            cur += 1
            best = max(best, cur)
        else:
            cur = 1
    return best
