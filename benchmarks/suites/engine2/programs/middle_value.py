def middle_value(values):
    """The median of ``values`` (the mean of the two middle ones for an even count)."""
    ordered = values
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2
