INPUTS = [(s, w, c) for s in ['', '7', '123', 'abcd'] for w in range(0, 7) for c in ' 0']
