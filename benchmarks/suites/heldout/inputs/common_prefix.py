INPUTS = [(ws,) for ws in [["flower", "flow", "flight"], [], ["a"], ["", "abc"], ["abc", "abc"], ["abc", "abd"], ["dog", "racecar", "car"],
                           ["interview", "internet", "interval"], ["ab", "a"], ["a", "ab"], ["prefix", "suffix"],
                           ["throne", "throne", "thro"], ["same"], ["abcde", "abcdf", "abcxy"], ["x", "y"], ["aaa", "aa", "a"],
                           ["test", "tester", "testing"], ["bcd", "cd"], ["cat", "at"], ["abab", "ab"]]]
