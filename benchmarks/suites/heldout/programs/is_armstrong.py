def is_armstrong(n):
    s = str(n)
    return sum(int(c) ** 3 for c in s) == n
