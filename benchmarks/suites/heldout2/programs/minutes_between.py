def minutes_between(start, end):
    """Minutes from clock time start to clock time end ("HH:MM"), wrapping past midnight."""
    h1, m1 = map(int, start.split(":"))
    h2, m2 = map(int, end.split(":"))
    diff = (h2 * 60 + m1) - (h1 * 60 + m1)
    return diff % 1440
