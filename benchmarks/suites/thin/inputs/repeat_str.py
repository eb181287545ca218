INPUTS = [(s, n) for s in ['', 'x', 'ab'] for n in range(0, 6)]
