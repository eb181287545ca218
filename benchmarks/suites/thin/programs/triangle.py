def triangle(n):
    return n * (n - 1) // 2
