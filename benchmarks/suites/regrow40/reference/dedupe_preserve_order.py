def dedupe_preserve_order(items):
    """Drop repeated items, keeping first occurrences in their original order."""
    seen = set()
    out = []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out
