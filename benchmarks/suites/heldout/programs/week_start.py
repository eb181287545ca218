from datetime import timedelta
def week_start(d):
    return d - timedelta(days=d.isoweekday())
