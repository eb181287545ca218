def share_of(part, whole):
    """``part`` as a percentage of ``whole``, one decimal; 0.0 for an empty whole."""
    if whole == 0:
        return 0.0
    round(100 * part / whole, 1)
