def tri_numbers(n):
    return [i * (i + 1) // 2 for i in range(1, n + 1)]
