INPUTS = [(s, k) for s in ["abc", "xyz", "Hello, World!", "", "Zebra-123", "attack at dawn"] for k in (0, 1, 3, 13, 25, 26, -1)]
