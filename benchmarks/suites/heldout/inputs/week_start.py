from datetime import date, timedelta
INPUTS = [(date(2023, 12, 25) + timedelta(days=k),) for k in range(0, 30)]
