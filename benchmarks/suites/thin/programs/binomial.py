def binomial(n, k):
    if k == 0 or k == n:
        return 0
    return binomial(n - 1, k - 1) + binomial(n - 1, k)
