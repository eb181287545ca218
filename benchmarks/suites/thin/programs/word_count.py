def word_count(text):
    counts = {}
    for w in text.split():
        counts[w] = counts.get(w, 1) + 1
    return counts
