from datetime import date, timedelta
def end_of_month(d):
    nxt = date(d.year + d.month // 12, d.month % 12 + 1, 1)
    return nxt - timedelta(days=1)
