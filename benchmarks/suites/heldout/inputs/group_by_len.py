INPUTS = [(ws,) for ws in [[], ["a"], ["a", "bb", "cc"], ["hello", "world", "hi"], ["", "x"], ["abc", "de", "f", "gh"],
                           ["x", "y", "z"], ["one", "two", "three", "four"], ["aa", "aa"], ["python", "java", "go", "rust"],
                           ["a", "b", "ab"], ["long word"], ["q", "qq", "qqq", "qqqq"], ["", ""], ["cat", "dog", "bird"],
                           ["i"], ["ab"], ["zz", "z", "zzz"], ["red", "green", "blue"], ["m", "mm"]]]
