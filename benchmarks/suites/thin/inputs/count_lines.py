INPUTS = [(t,) for t in ['', 'a', 'a\n', 'a\nb', 'a\nb\n', '\n', '\n\n', 'x\ny\nz']]
