INPUTS = [(s,) for s in ['#000000', '#ffffff', '#ff8800', '#123456', 'abcdef', '#0a0b0c']]
