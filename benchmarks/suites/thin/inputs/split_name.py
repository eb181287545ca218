INPUTS = [(s,) for s in ['Ada', 'Ada Lovelace', 'Jean Luc Picard', '  a   b  c d ']]
