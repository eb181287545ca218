INPUTS = [(s,) for s in ['', 'a', 'A', 'aB', 'AbC', 'camelCaseString', 'HTTPServer', 'xY', 'simple']]
