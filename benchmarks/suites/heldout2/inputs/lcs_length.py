INPUTS = [(a, b) for a in ["", "a", "aa", "abc", "abcde", "banana", "aab"] for b in ["", "a", "ace", "anana", "baa"]]
