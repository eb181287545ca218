from datetime import date
NAMES = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
def weekday_name(d):
    return NAMES[d.isoweekday()]
