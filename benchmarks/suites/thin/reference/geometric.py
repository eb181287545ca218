def geometric(a, r, n):
    terms = []
    t = a
    for _ in range(n):
        terms.append(t)
        t *= r
    return terms
