from datetime import date
def days_left_in_year(d):
    return (date(d.year, 12, 31) - d).days + 1
