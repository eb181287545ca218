INPUTS = [(s,) for s in ["", "a", "aa", "ab", "aba", "abba", "abca", "racecar", "racecars", "level", "noon", "abcba",
                         "abccba", "abcdba", "xyzzyx", "xx x", "12321", "1231", "madam", "aab"]]
