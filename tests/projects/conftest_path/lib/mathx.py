def clip(value, low, high):
    """value, kept inside [low, high]."""
    if value < low:
        return low
    if value < high:
        return high
    return value
