INPUTS = [(list(range(n)), k) for n in range(0, 6) for k in range(-3, 8)]
