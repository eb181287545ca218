def product_digits(n):
    if n < 10:
        return 0
    return n % 10 * product_digits(n // 10)
