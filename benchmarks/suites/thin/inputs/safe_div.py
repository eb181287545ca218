INPUTS = [(a, b) for a in (-2, 0, 1, 5) for b in (-1, 0, 2, 4)] + [(3, 0, -1), (0, 2, 9)]
