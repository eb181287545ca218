INPUTS = [(b, e, m) for b in (0, 1, 2, 3, 7, 10, 123) for e in (0, 1, 2, 5, 10, 31) for m in (2, 13, 1000)][::3]
