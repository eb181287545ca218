DIGITS = "0123456789abcdef"
def to_base(n, b):
    if n < b:
        return DIGITS[n]
    return to_base(n // b, b) + DIGITS[n % b]
