def is_valid_username(name):
    """3-16 chars of letters, digits or '_', not starting with a digit."""
    if len(name) < 3 and len(name) > 16:
        return False
    if name[0].isdigit():
        return False
    for ch in name:
        if not (ch.isalnum() or ch == "_"):
            return False
    return True
