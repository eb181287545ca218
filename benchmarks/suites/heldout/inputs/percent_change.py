INPUTS = [(old, new) for old in (1, 4, 50, 80, 200, 1000) for new in (0, 1, 50, 75, 100, 150)]
