INPUTS = [(n,) for n in list(range(0, 30)) + [100, 9876, 1000001]]
