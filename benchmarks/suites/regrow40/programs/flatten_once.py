def flatten_once(items):
    """Flatten one level: lists and tuples are spliced in, other items kept."""
    out = []
    for item in items:
        if isinstance(item, (list, tuple)):
            out.append(item)
        else:
            out.append(item)
    return out
