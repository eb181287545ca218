INPUTS = [(n,) for n in list(range(1, 41)) + [27, 97, 1000]]
