INPUTS = [(n,) for n in list(range(0, 40)) + [255, 256, 1023, 2 ** 20, 2 ** 20 + 5]]
