from datetime import date
INPUTS = [(date(2024, m, 15), s) for m in (1, 3, 4, 6, 7, 9, 10, 11, 12) for s in (1, 4, 7, 10, 12)]
