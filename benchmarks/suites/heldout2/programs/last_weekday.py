from datetime import date, timedelta


def last_weekday(year, month, weekday):
    """Date of the last given weekday (Monday == 0) in the month."""
    if month == 12:
        d = date(year + 1, 1, 1)
    else:
        d = date(year, month + 1, 1)
    d -= timedelta(days=1)
    while d.weekday() == weekday:
        d -= timedelta(days=1)
    return d
