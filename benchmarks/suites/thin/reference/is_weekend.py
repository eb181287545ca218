from datetime import date
def is_weekend(d):
    return d.weekday() >= 5
