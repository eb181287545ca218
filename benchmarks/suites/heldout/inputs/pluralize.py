INPUTS = [(w, n) for w in ("cat", "file", "item") for n in (0, 1, 2, 3, 10, -1, -2, 100)]
