def days_in_year(y):
    if y % 4 == 0 and (y % 100 != 0 or y % 400 != 0):
        return 366
    return 365
