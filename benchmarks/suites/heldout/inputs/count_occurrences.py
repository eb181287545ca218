INPUTS = [(s, sub) for s, sub in [("banana", "ana"), ("banana", "a"), ("banana", "na"), ("aaaa", "aa"), ("aaaa", "a"), ("", "a"),
                                   ("abc", "abc"), ("abc", "abcd"), ("abcabc", "abc"), ("xyz", "q"), ("a", "a"), ("ab", "b"),
                                   ("mississippi", "issi"), ("mississippi", "s"), ("hello", "lo"), ("hello", "he"),
                                   ("1111", "11"), ("abab", "ab"), ("abab", "ba"), ("tttt", "ttt")]]
