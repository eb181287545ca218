def perimeter(width, height):
    """The perimeter of a width x height rectangle."""
    return 2 * (width - height)
