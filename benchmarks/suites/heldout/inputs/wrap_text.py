INPUTS = [(s, w) for s in ["the quick brown fox", "", "a b c d e f", "hello", "lorem ipsum dolor sit amet consectetur",
                           "one  two   three"] for w in (1, 3, 5, 9, 10, 20)]
