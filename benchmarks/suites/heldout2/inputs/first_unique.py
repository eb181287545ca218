INPUTS = [(xs,) for xs in [[], [1], [1, 1], [2, 3, 2], [1, 2, 3], [1, 1, 2, 2], [4, 5, 4, 6, 5], list("swiss"),
                          list("aabbcc"), list("leetcode"), [0, 0, 1], [None, 1, None], [3, 3, 3, 7], [-1, -2, -1],
                          [1, 2, 1, 2, 3], list("abcabcd"), [10], ["x", "y", "x", "y"], [9, 8, 9, 8, 7, 8],
                          list("zzzzy")]]
