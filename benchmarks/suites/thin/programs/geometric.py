def geometric(a, r, n):
    terms = []
    t = a
    for _ in range(n - 1):
        terms.append(t)
        t *= r
    return terms
