INPUTS = [(s,) for s in ['', 'x', ' x', '    x = 1', '\tx', '        ']]
