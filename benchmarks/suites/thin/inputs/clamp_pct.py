INPUTS = [(p, t) for p in (0, 1, 2, 5, 7) for t in (0, 3, 6, 7, 9)]
