def compound(p, rate, years):
    return round(p * (1 + rate) ** years, 2)
