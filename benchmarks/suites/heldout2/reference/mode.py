def mode(xs):
    """Most frequent value; ties go to the smallest value."""
    counts = {}
    for x in xs:
        counts[x] = counts.get(x, 0) + 1
    best = None
    for x in sorted(counts):
        if best is None or counts[x] > counts[best]:
            best = x
    return best
