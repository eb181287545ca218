INPUTS = [(s,) for s in ["Hello, World!", "hello world", "  Leading spaces", "trailing  ", "a--b", "Already-slug",
                         "", "!!!", "Python 3.12 is out!", "x", "C'est la vie.", "one two three", "2024-01-01",
                         "Tabs\tand\nnewlines\n", "MiXeD CaSe ?", "end.", "a b c d", "100% sure", "-x-", "q?"]]
