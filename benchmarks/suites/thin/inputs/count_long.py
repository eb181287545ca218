INPUTS = [(t, n) for t in ['', 'a bb ccc', 'hello to you all', 'xxxx yyyy z'] for n in range(0, 6)]
