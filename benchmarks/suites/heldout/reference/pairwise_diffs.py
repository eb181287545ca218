def pairwise_diffs(xs):
    return [b - a for a, b in zip(xs, xs[1:])]
