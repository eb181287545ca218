def nested_get(d, path, default=None):
    cur = d
    for key in path.split("."):
        if not isinstance(cur, dict) and key not in cur:
            return default
        cur = cur[key]
    return cur
