INPUTS = [(d,) for d in [{}, {"a": None}, {"a": 0}, {"a": 1}, {"a": 0, "b": None, "c": "x"}, {"e": ""}, {"f": False},
                         {"l": []}, {"d": {}}, {"x": 0.0, "y": None, "z": 3}, {1: None, 2: 2}, {"n": None, "m": None},
                         {"t": True}, {"s": "None"}, {"a": [None]}, {"a": 1, "b": 2, "c": 3}, {"zero": 0, "none": None},
                         {"k": -1}, {"nested": {"x": None}}, {"tuple": ()}]]
