def count_digits(n):
    if n < 10:
        return 0
    return 1 + count_digits(n // 10)
