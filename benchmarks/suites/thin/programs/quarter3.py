def quarter(month):
    return month // 3 + 1
