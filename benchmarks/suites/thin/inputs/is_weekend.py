from datetime import date, timedelta
INPUTS = [(date(2024, 6, 1) + timedelta(days=i),) for i in range(14)]
