def sum_evens(xs):
    total = 0
    for x in xs:
        if x % 2 == 1:
            total += x
    return total
