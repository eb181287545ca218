INPUTS = [(a,) for a in list(range(0, 41)) + [41, 60, 99, 100, 137]]
