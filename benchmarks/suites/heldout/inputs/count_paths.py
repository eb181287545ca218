INPUTS = [(r, c) for r in range(0, 6) for c in range(0, 6)]
