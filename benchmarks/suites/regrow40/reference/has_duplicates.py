def has_duplicates(items):
    """True if any value occurs more than once."""
    seen = set()
    found = False
    for item in items:
        if item in seen:
            found = True
            break
        seen.add(item)
    return found
