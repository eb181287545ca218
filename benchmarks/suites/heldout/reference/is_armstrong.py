def is_armstrong(n):
    s = str(n)
    return sum(int(c) ** len(s) for c in s) == n
