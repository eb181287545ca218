def to_number(text, default=None):
    """``text`` as an int, else as a float, else ``default``."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return default
