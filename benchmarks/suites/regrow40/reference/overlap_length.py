def overlap_length(a_start, a_end, b_start, b_end):
    """Length of the intersection of half-open intervals [a_start, a_end) and [b_start, b_end)."""
    if max(a_start, b_start) >= min(a_end, b_end):
        return 0
    return min(a_end, b_end) - max(a_start, b_start)
