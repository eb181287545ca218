_D = {"a": {"b": 1, "c": {"d": "deep"}}, "x": 5, "n": None, "l": [1, 2], "e": {}}
INPUTS = [(_D, p, dflt) for p in ["a", "a.b", "a.c", "a.c.d", "a.z", "a.b.c", "x", "x.y", "n", "n.m", "l", "l.0",
                                  "e", "e.k", "missing", "", "a.c.d.e"]
          for dflt in (None, 0)] + [({}, "a", None), ({}, "", "d"), ({"": 1}, "", None), ({"a": {"": 2}}, "a.", None)]
