INPUTS = [(s,) for s in ['5C', '20C', '100C', '-3.5C', ' 37C ']]
