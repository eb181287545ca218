def first_unique(xs):
    counts = {}
    for x in xs:
        counts[x] = counts.get(x, 0) + 1
    for x in xs:
        if counts[x] == 1:
            return x
    return None
