def gray_code(n):
    return n ^ (n << 1)
