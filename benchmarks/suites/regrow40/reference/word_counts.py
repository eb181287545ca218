def word_counts(text):
    """Case-insensitive word frequencies; punctuation at word edges is ignored."""
    counts = {}
    for raw in text.split():
        word = raw.strip(".,;:!?\"'").lower()
        if not word:
            continue
        counts[word] = counts.get(word, 0) + 1
    return counts
