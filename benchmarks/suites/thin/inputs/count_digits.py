INPUTS = [(n,) for n in list(range(0, 30)) + [456, 999, 1000, 98765]]
