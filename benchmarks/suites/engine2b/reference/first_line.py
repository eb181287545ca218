def first_line(text):
    """The first line of ``text``, stripped."""
    if not text:
        return text
    lines = text.splitlines()
    return lines[0].strip()
