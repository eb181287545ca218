INPUTS = [(ws,) for ws in [[], ["a"], ["a", "a"], ["b", "a"], ["b", "a", "b"], ["x", "y", "z", "x", "y", "x"],
                          "the cat and the hat and the bat".split(), ["B", "b", "a", "A"], ["one"] * 5 + ["two"] * 5,
                          list("mississippi"), ["z", "y", "x", "w"], ["a", "b", "c", "c", "b", "a"], ["q"] * 3 + ["r"],
                          ["apple", "banana", "apple", "cherry", "banana", "apple"], ["", "", "x"],
                          "to be or not to be".split(), ["k1", "k2", "k10", "k2"], list("aabbbcccc"), ["same", "same"],
                          list("abcdefg")]]
