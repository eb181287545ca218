INPUTS = [(n,) for n in list(range(1, 31)) + [40, 50, 75, 100]]
