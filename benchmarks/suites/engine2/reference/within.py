def within(value, low, high):
    """Whether ``low <= value <= high``."""
    return value >= low and value <= high
