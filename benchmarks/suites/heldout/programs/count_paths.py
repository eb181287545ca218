def count_paths(r, c):
    """Monotone lattice paths from (0, 0) to (r, c)."""
    if r == 0 and c == 0:
        return 1
    return count_paths(r - 1, c) + count_paths(r, c - 1)
