INPUTS = [(p, rate, m) for p in (1000, 10000, 250000) for rate in (0, 0.03, 0.06, 0.12) for m in (1, 12, 60, 360)]
