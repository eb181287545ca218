INPUTS = [(n, k) for n in range(0, 10) for k in range(0, n + 1)]
