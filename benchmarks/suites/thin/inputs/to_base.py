INPUTS = [(n, b) for n in range(0, 70) for b in (2, 3, 8, 10, 16)]
