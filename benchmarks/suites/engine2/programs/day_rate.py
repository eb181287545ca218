WEEK = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


def day_rate(day, base):
    """The rate for ``day``: double at the weekend."""
    if day not in WEEK:
        raise ValueError(day)
    if day == "sat":
        return base * 2
    return base
