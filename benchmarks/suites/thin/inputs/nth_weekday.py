INPUTS = [(2024, m, wd, n) for m in (1, 2, 9, 11) for wd in range(7) for n in (1, 2, 3, 4)]
