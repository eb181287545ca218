def squeeze_spaces(text):
    """Runs of spaces collapsed to one space."""
    out = []
    in_gap = False
    for ch in text:
        if ch == " ":
            if not in_gap:
                out.append(ch)
            in_gap = True
        else:
            out.append(ch)
    return "".join(out)
