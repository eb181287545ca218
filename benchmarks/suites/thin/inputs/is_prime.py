INPUTS = [(n,) for n in range(-3, 200)]
