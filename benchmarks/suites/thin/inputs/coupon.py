INPUTS = [(p, c) for p in (100, 50) for c in ('SAVE5', 'SAVE10', 'SAVE20', 'SAVE100', 'SAVE0')]
