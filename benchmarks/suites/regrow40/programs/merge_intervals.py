def merge_intervals(intervals):
    """Merge overlapping or touching closed intervals; result sorted by start."""
    merged = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(start, end)
        else:
            merged.append([start, end])
    return merged
