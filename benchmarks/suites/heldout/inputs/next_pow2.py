INPUTS = [(n,) for n in list(range(0, 40)) + [63, 64, 65, 1000, 1024, 1025]]
