def first_key(table):
    """The first key inserted into ``table``, or None when it is empty."""
    keys = list(table.keys())
    return keys[0] if keys else None
