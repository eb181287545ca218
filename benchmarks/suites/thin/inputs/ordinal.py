INPUTS = [(n,) for n in list(range(0, 130)) + [211, 1001, 1011, 1013]]
