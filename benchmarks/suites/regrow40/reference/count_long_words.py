def count_long_words(text, min_len):
    """Count words (edge punctuation removed) with at least min_len characters."""
    count = 0
    for raw in text.split():
        word = raw.strip(".,!?;:")
        if len(word) >= min_len:
            count += 1
    return count
