from datetime import date
INPUTS = [(date(2000, 5, 10), date(2020, m, d)) for m in (1, 5, 6, 12) for d in (1, 9, 10, 11, 28)]
