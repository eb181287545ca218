INPUTS = [(n,) for n in list(range(0, 40)) + [99, 100, 101, 10 ** 6 - 1, 10 ** 6]]
