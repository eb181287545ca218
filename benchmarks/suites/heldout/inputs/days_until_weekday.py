from datetime import date
INPUTS = [(date(2024, 5, day), t) for day in (13, 15, 18, 19) for t in range(7)]
