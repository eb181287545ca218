def word_ranking(words):
    """(word, count) pairs, most frequent first, ties in alphabetical order."""
    counts = {}
    for w in words:
        counts[w] = counts.get(w, 0) + 1
    return sorted(counts.items(), key=lambda kv: (kv[1], kv[0]))
