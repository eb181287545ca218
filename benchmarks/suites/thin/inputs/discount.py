INPUTS = [(p, d) for p in (0, 10, 200, 99.5) for d in (0, 10, 25, 50, 100)]
