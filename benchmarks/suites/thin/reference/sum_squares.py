def sum_squares(n):
    total = 0
    for i in range(n + 1):
        total += i * i
    return total
