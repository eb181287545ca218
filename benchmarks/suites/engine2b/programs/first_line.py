def first_line(text):
    """The first line of ``text``, stripped."""
    lines = text.splitlines()
    return lines[0].strip()
