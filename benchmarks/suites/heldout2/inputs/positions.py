INPUTS = [(xs, t) for xs in [[], [5], [5, 1, 5], [1, 2, 3], [0, 0, 0], list("banana"), [None, 1, None]]
          for t in (5, 0, 1, "a", None)]
