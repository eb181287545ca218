from datetime import date, timedelta
INPUTS = [(date(2024, 1, 1) + timedelta(days=i),) for i in range(0, 60, 3)]
