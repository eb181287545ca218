from datetime import date
INPUTS = [(date(y, m, 5),) for y in (2023, 2024) for m in range(1, 13)]
