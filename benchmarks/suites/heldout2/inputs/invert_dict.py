INPUTS = [(d,) for d in [{}, {"a": 1}, {"a": 1, "b": 1}, {"a": 1, "b": 2, "c": 1}, {1: "x", 2: "y", 3: "x"},
                         {"k": None}, {"a": 0, "b": 0, "c": 0}, {"x": "y", "y": "x"}, {i: i % 3 for i in range(10)},
                         {"one": 1, "uno": 1, "two": 2, "dos": 2, "three": 3}, {(1, 2): "t"}, {"a": True, "b": False},
                         {"s": "", "t": ""}, {5: 5}, {i: i for i in range(6)}, {"p": -1, "q": -1, "r": 1},
                         {"red": "#f00", "rouge": "#f00", "green": "#0f0"}, {"a": 1.5, "b": 1.5}, {"z": "a", "y": "b"},
                         {i: "even" if i % 2 == 0 else "odd" for i in range(7)}]]
