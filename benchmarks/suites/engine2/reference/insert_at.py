def insert_at(ordered, value):
    """Where ``value`` goes in the sorted list ``ordered`` (after items equal to it)."""
    for index, item in enumerate(ordered):
        if item > value:
            return index
    return len(ordered)
