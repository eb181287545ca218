from datetime import date
def week_number(d):
    return d.isocalendar()[2]
