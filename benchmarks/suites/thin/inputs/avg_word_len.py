INPUTS = [(t,) for t in ['', 'a', 'hi there', 'one two three', 'x yy zzz wwww']]
