from datetime import date
INPUTS = [(date(2024, 1, 1), date(2024, m, d)) for m in (1, 2, 3) for d in (1, 2, 15)] + [(date(2024,3,1), date(2023,12,25))]
