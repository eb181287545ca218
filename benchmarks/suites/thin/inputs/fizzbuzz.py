INPUTS = [(n,) for n in range(1, 61)]
