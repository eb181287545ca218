INPUTS = [(n,) for n in list(range(0, 120)) + [9999, 100000, 987654321]]
