INPUTS = [(n,) for n in list(range(0, 60)) + [234, 999, 1111, 2222]]
