INPUTS = [(a0, a1, b0, b1) for a0 in range(0, 4) for a1 in range(a0, 5) for b0 in range(0, 4) for b1 in range(b0, 5)]
