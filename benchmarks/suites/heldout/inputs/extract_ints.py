INPUTS = [(s,) for s in ["3 apples and 12", "", "abc", "42", "a1b22c333", "x=10, y=20", "007 agent", "1 2 3", "12ab",
                         "v2.0.11", "phone 555-1234", "no digits here!", "9", "room 101", "temp -5 to 30", "2024-05-17",
                         "a1", "1a", "  77  ", "x99y"]]
