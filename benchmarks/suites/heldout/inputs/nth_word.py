INPUTS = ([(s, n) for s in ["alpha beta gamma", "one two three four five", "solo", "a  b   c", "x y"]
          for n in range(1, len(s.split()) + 1)] + [("the quick brown fox jumps", k) for k in (1, 2, 3, 4, 5)]
          + [("  padded   words here ", k) for k in (1, 2, 3)])
