def argmax(xs):
    """Index of the first maximum element; None for empty input."""
    if not xs:
        return None
    best_i = 0
    best_v = xs[0]
    for i, v in enumerate(xs):
        if v > best_v:
            best_i = i
    return best_i
