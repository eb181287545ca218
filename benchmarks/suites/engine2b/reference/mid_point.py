def mid_point(a, b):
    """The point halfway between points ``a`` and ``b``."""
    return ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)
