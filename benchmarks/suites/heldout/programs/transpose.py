def transpose(m):
    if not m:
        return []
    return [[row[i] for row in m] for i in range(len(m))]
