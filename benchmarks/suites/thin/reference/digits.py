def digits(n):
    if n < 10:
        return [n]
    return digits(n // 10) + [n % 10]
