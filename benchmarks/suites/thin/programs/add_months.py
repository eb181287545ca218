from datetime import date
import calendar
def add_months(d, n):
    m = d.month + n
    y = d.year + (m - 1) // 12
    m = m % 12 + 1
    day = min(d.day, calendar.monthrange(y, m)[1])
    return date(y, m, day)
