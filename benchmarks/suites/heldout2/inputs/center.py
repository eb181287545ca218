INPUTS = [(s, w, f) for s in ["", "a", "ab", "abc", "hello"] for w in (0, 1, 2, 4, 5, 8) for f in (" ", "*")][::2]
