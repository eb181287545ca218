from datetime import datetime, timedelta
def shift_minutes(start, end):
    t1 = datetime.strptime(start, "%H:%M")
    t2 = datetime.strptime(end, "%H:%M")
    if t2 > t1:
        t2 += timedelta(days=1)
    return int((t2 - t1).total_seconds() // 60)
