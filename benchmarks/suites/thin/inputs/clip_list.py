INPUTS = [(xs, lo, hi) for xs in [[], [-5, 5, 50], [0, 10, 11, -1]] for lo, hi in [(0, 10), (-3, 3), (5, 5)]]
