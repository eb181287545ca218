INPUTS = [(s,) for s in ['1', '0', 'true', 'TRUE', 'Yes', 'no', 'off', 'On', ' true ', '', 'y']]
