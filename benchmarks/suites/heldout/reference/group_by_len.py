def group_by_len(words):
    groups = {}
    for w in words:
        groups.setdefault(len(w), []).append(w)
    return groups
