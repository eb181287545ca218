INPUTS = [(a, b) for a, b in [("Listen", "Silent"), ("apple", "paper"), ("", ""), ("a", "a"), ("a", "b"), ("Dormitory", "dirty room"),
                               ("abc", "abcd"), ("aab", "abb"), ("Astronomer", "Moon starer"), ("night", "thing"), ("rat", "car"),
                               ("The eyes", "They see"), ("abc", "cba "), ("x", ""), ("", "y"), ("Elvis", "lives"),
                               ("state", "taste"), ("hello", "world"), ("aa", "a"), ("123", "321")]]
