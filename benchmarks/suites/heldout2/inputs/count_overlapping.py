INPUTS = [(s, sub) for s in ["", "a", "aa", "aaaa", "abab", "ababab", "banana", "mississippi", "abc"]
          for sub in ["a", "aa", "ab", "ana", "abc"]]
