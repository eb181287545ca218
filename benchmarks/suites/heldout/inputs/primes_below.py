INPUTS = [(n,) for n in list(range(0, 50)) + [100, 121, 122, 170]]
