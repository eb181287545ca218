INPUTS = [(d,) for d in range(0, 30)]
