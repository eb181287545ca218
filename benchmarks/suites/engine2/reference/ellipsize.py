def ellipsize(text, width):
    """``text`` cut to ``width`` characters, the last one an ellipsis when it had to be cut."""
    if len(text) <= width:
        return text
    shortened = text[: width - 1] + "…"
    return shortened
