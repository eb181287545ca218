INPUTS = [(s,) for s in ['', 'a=1', 'a=1;', 'a = 1 ; b=2', 'k=v=w;z=1', 'x=']]
