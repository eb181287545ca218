def second_largest(xs):
    """Second largest distinct value, or None if there are fewer than two."""
    distinct = sorted(set(xs))
    if len(distinct) < 2:
        return None
    return distinct[-2]
