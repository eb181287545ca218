def max_non_overlapping(intervals):
    """Greedy: most half-open intervals (start, end) that can be chosen without overlap."""
    count = 0
    last_end = float("-inf")
    for start, end in sorted(intervals, key=lambda iv: iv[0]):
        if start >= last_end:
            count += 1
            last_end = end
    return count
