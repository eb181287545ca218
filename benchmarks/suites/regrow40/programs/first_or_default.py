def first_or_default(items, default=None):
    """First element of a sequence; default when items is None or empty."""
    if items is None:
        return default
    first = items[0]
    return first
