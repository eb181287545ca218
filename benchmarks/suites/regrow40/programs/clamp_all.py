def _clamp(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


def clamp_all(values, lo, hi):
    """Clamp every value into [lo, hi]."""
    if lo > hi:
        raise ValueError("empty range")
    result = []
    for v in values:
        result.append(_clamp(v, hi, lo))
    return result
