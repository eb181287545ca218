INPUTS = [(s,) for s in ["", "a", "ab", "aa", "aaa", "aaabcc", "abc", "aabbaa", "112223", "z" * 12, "hello world",
                         "mississippi", "  x  ", "abab", "aaaaabbbbbcccccd", "xyzzy", "100000", "ccccccccccb", "q", "aab"]]
