INPUTS = [(n,) for n in list(range(0, 60)) + [1994, 2024, 3999, 400, 900]]
