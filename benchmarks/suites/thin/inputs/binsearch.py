INPUTS = [(list(range(0, 2*n, 2)), t) for n in range(0, 8) for t in range(-1, 2*n+1)]
