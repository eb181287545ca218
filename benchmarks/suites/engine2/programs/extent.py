def extent(points):
    """(min x, min y, max x, max y) of a list of (x, y) points."""
    xs = [x for x, _ in points]
    ys = [y for _, y in points]
    return (max(xs), max(ys), max(xs), max(ys))
