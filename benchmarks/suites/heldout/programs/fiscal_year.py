def fiscal_year(d, start_month=10):
    return d.year + 1 if d.month > start_month else d.year
