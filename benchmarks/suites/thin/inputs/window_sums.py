INPUTS = [(list(range(1, n + 1)), k) for n in range(0, 7) for k in range(1, 5)]
