def ordinal_suffix(n):
    """English ordinal suffix for a non-negative int: 1 -> 'st', 12 -> 'th', 23 -> 'rd'."""
    if 11 <= n % 100 <= 12:
        return "th"
    last = n % 10
    if last == 1:
        return "st"
    if last == 2:
        return "nd"
    if last == 3:
        return "rd"
    return "th"
