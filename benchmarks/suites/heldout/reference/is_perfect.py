def is_perfect(n):
    return sum(d for d in range(1, n) if n % d == 0) == n
