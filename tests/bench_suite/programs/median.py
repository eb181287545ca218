def median(values):
    """The middle value (mean of the two middle ones for an even count)."""
    return sum(values) / len(values)
