def percent_change(old, new):
    return round((new - old) / old * 100, 2)
