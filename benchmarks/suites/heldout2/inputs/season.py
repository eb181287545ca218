from datetime import date
INPUTS = [(date(y, m, d),) for y in (2023, 2024) for m in range(1, 13) for d in (1, 28)]
