SMALL_WORDS = {"a", "an", "the", "and", "of", "in", "on", "to"}


def title_case(text):
    """Capitalize words, but keep small words (a, an, the, and, of, in, on, to) lowercase unless first or last."""
    words = text.lower().split()
    out = []
    for i, w in enumerate(words):
        if w in SMALL_WORDS and 0 < i < len(words) - 1:
            out.append(w)
        else:
            out.append(w.capitalize())
    return " ".join(out)
