INPUTS = [(a, r, n) for a in (1, 3) for r in (2, -1, 10) for n in range(0, 6)]
