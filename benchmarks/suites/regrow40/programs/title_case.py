def title_case(text):
    """Capitalize words, but keep small words (a, an, the, and, of, in, on, to) lowercase unless first or last."""
    words = text.lower().split()
    return " ".join(w.capitalize() for w in words)
