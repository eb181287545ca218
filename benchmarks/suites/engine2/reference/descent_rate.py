def descent_rate(start, end, minutes):
    """Metres lost per minute going from altitude start to altitude end (negative when climbing)."""
    if minutes <= 0:
        raise ValueError("minutes must be positive")
    return (start - end) / minutes
