def build_query(params):
    """'a=1&b=2' sorted by key; skips keys starting with '_' and values that are None or ''."""
    parts = []
    for key in sorted(params):
        value = params[key]
        if not key.startswith("_"):
            parts.append(key + "=" + str(value))
    return "&".join(parts)
