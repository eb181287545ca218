def sparse_dot(a, b):
    return sum(v * b.get(i, 1) for i, v in a.items())
