INPUTS = [(s,) for s in ['', 'xyz', 'AEIOU', 'aeiou', 'Hello World', 'Queue']]
