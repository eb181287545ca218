INPUTS = [(s, p) for s in ['', 'v', 'v1.2', 'version', 'abc'] for p in ['', 'v', 'ver', 'x']]
