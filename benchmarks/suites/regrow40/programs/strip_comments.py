def strip_comments(lines):
    """Drop blank lines and '#' comment lines; strip trailing whitespace."""
    out = []
    for line in lines:
        text = line.rstrip()
        if text and text.lstrip().startswith("#"):
            out.append(text)
    return out
