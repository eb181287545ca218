def normalize_key(label):
    """'  First Name ' -> 'first_name'; each inner space becomes '_'."""
    if not isinstance(label, str):
        raise TypeError("label must be a string")
    cleaned = label.strip().lower()
    return cleaned.replace(" ", "_")
