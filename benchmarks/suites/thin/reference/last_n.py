def last_n(xs, n):
    return xs[len(xs) - n:] if n > 0 else []
