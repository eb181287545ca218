def count_long(text, n):
    return sum(1 for w in text.split() if len(w) >= n)
