INPUTS = [(list(range(k)), n) for k in range(0, 9) for n in range(1, 5)]
