INPUTS = [(a, b, c) for a in (1, 2, -1) for b in (-3, 0, 2, 4) for c in (-4, 0, 1, 2)]
