from datetime import timedelta
def business_days(start, end):
    n, d = 0, start
    while d < end:
        if d.weekday() < 6:
            n += 1
        d += timedelta(days=1)
    return n
