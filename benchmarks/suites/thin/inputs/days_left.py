from datetime import date
INPUTS = [(date(y, m, dd),) for y in (2023, 2024) for m in (1, 2, 6, 12) for dd in (1, 15, 28)]
