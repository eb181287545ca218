INPUTS = [(m,) for m in range(1, 13)]
