INPUTS = [(p, r, y) for p in (0, 100, 250.5) for r in (0, 0.05, 0.1) for y in (0, 1, 2, 3, 10)]
