INPUTS = [(s, n) for s in ['', 'ab', 'hello', 'hello world'] for n in range(3, 13)]
