def max_rec(xs):
    if len(xs) == 1:
        return xs[0]
    rest = max_rec(xs[1:])
    return xs[0] if xs[0] > rest else rest
