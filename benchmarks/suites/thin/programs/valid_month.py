def valid_month(m):
    return 1 <= m < 12
