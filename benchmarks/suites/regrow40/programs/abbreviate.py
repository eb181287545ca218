def abbreviate(full_name):
    """'John Ronald Tolkien' -> 'J. R. Tolkien'; a single name is returned unchanged."""
    parts = full_name.split()
    if not parts:
        return ""
    last = parts[-1]
    initials = ""
    for part in parts[:-1]:
        initials += part[0].upper() + ". "
    return initials
