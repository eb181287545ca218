def word_total(text):
    """How many words ``text`` has; None has none."""
    if text is None:
        return 0
    words = text.split()
    return len(words)
