def clean_fields(fields):
    """Strip whitespace from the keys and values of a str->str dict; drop entries with an empty key."""
    cleaned = {}
    for key, value in fields.items():
        key = key.strip()
        value = value.strip()
        if not key:
            continue
        cleaned[key] = value
    return cleaned
