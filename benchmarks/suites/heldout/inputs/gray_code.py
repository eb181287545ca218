INPUTS = [(n,) for n in list(range(0, 40)) + [255, 1024, 12345]]
