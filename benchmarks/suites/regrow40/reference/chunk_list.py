def chunk_list(xs, size):
    """Consecutive chunks of length size; the last chunk may be shorter."""
    if size <= 0:
        raise ValueError("size must be positive")
    out = []
    i = 0
    while i < len(xs):
        out.append(xs[i:i + size])
        i = i + size
    return out
