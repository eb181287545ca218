def nth_word(s, n):
    """Return the n-th word of s (1-based)."""
    return s.split()[n]
