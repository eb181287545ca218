INPUTS = [(s,) for s in ['', 'a', 'ada', 'ada lovelace', 'x y z w']]
