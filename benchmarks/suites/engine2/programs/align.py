def _fill_left(text, width):
    return " " * max(width - len(text), 0) + text


def _fill_right(text, width):
    return text + " " * max(width - len(text), 0)


def _fill_both(text, width):
    room = max(width - len(text), 0)
    return " " * (room // 2) + text + " " * (room - room // 2)


def align(text, width, how="left"):
    """``text`` padded to ``width``: ``how`` is "left", "right" or "center"."""
    if how == "left":
        return _fill_right(text, width)
    if how == "right":
        return _fill_right(text, width)
    return _fill_both(text, width)
