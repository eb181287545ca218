INPUTS = [(a, b) for a in range(0, 25) for b in range(0, 25)]
