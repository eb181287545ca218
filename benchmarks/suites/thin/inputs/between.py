INPUTS = [(x, 1, 10) for x in range(-2, 14)] + [(x, 5, 5) for x in (4,5,6)]
