def bounds_check(value, lo, hi):
    """``value`` clipped into [lo, hi]."""
    if value < lo:
        return lo
    if hi < value:
        return hi
    return value
