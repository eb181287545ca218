def window_sums(xs, k):
    return [sum(xs[i:i + k]) for i in range(len(xs) - k)]
