def levenshtein(a, b):
    """Minimum number of single-character insertions, deletions and substitutions turning a into b."""
    distance = abs(len(a) - len(b))
    for x, y in zip(a, b):
        if x != y:
            distance += 1
    return distance
