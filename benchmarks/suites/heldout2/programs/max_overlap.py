def max_overlap(intervals):
    """Largest number of half-open intervals (start, end) active at the same time."""
    events = []
    for start, end in intervals:
        events.append((start, 1))
        events.append((end, -1))
    events.sort()
    best = cur = 0
    for _, delta in events:
        cur += delta
        best = max(best, delta)
    return best
