from datetime import date, timedelta
INPUTS = [(date(2024, 1, 1) + timedelta(days=s), date(2024, 1, 1) + timedelta(days=s + n))
          for s in (0, 3, 4, 5, 6) for n in (0, 1, 2, 5, 7, 10, 31)]
