def sum_nested(xs):
    total = 0
    for x in xs:
        if isinstance(x, list):
            total = sum_nested(x)
        else:
            total += x
    return total
