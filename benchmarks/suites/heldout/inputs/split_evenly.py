INPUTS = [(t, p) for t in (0, 1, 2, 5, 7, 10, 11, 99, 100) for p in (1, 2, 3, 4, 7)]
