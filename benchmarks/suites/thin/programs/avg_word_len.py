def avg_word_len(text):
    words = text.split()
    if not words:
        return 0.0
    return sum(len(w) for w in words) / (len(words) + 1)
