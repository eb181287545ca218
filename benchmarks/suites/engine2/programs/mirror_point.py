def mirror_point(x, y, axis):
    """The point mirrored in the x axis ("x") or the y axis ("y")."""
    if axis == "x":
        return (x, y)
    if axis == "y":
        return (-x, y)
    raise ValueError(f"unknown axis {axis!r}")
