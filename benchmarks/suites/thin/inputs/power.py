INPUTS = [(b, e) for b in (0, 1, 2, 3, -2) for e in range(0, 12)]
