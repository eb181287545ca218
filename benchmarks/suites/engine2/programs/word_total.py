def word_total(text):
    """How many words ``text`` has; None has none."""
    words = text.split()
    return len(words)
