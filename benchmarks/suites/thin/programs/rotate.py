def rotate(xs, k):
    if not xs:
        return xs
    k = k % len(xs)
    return xs[k:] + xs[:k + 1]
