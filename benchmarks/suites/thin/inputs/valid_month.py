INPUTS = [(m,) for m in range(-2, 16)]
