INPUTS = [(t,) for t in ['', 'x', 'x x x', 'a b c a b', 'the cat the hat the']]
