INPUTS = [(list(range(k)), n) for k in range(0, 6) for n in range(0, k + 1)]
