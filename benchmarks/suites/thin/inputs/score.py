INPUTS = [(f'{a}-{b}',) for a in range(4) for b in range(4)]
