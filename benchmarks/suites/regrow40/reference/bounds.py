def bounds(xs):
    """(smallest, largest) of a non-empty sequence in one pass."""
    lo = hi = xs[0]
    for x in xs:
        if x < lo:
            lo = x
        elif x > hi:
            hi = x
    return (lo, hi)
