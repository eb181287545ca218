INPUTS = [(x,) for x in [[], [1], [1, 1], [2, 1, 2, 1], [5, 4, 3], list('abcab')]]
