INPUTS = [(y,) for y in range(1890, 2110)]
