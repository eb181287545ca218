INPUTS = [(s,) for s in ["a quick brown fox", "", "one", "aa b ccc", "same size word", "hello world", "x yy zzz yy x",
                         "  spaced   out  ", "internationalization is long", "to be or not to be", "ab ba", "123 4 56",
                         "tie tie tie", "short longer longest", "a", "the end", "pneumonia flu", "i am", "abc de", "x y"]]
