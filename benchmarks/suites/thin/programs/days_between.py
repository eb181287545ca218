from datetime import date
def days_between(a, b):
    return abs((b - a).days) + 1
