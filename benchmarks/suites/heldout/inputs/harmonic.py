INPUTS = [(n,) for n in list(range(0, 31)) + [50, 100]]
