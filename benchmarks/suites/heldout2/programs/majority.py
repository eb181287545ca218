def majority(xs):
    """The value occurring in more than half of xs, or None."""
    candidate, count = None, 0
    for x in xs:
        if count == 0:
            candidate = x
        count += 1 if x == candidate else -1
    if xs.count(candidate) >= len(xs) // 2:
        return candidate
    return None
