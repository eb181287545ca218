INPUTS = [(n,) for n in range(0, 25)]
