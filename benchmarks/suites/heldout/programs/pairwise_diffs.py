def pairwise_diffs(xs):
    return [a - b for a, b in zip(xs, xs[1:])]
