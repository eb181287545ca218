INPUTS = [(n,) for n in list(range(1, 41)) + [496, 500, 8128]]
