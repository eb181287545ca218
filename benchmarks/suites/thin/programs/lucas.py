def lucas(n):
    a, b = 2, 1
    for _ in range(n + 1):
        a, b = b, a + b
    return a
