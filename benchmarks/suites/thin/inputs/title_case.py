INPUTS = [(s,) for s in ['', 'a', 'ab c', 'HELLO wORLD', ' x  yz ', 'élan vital']]
