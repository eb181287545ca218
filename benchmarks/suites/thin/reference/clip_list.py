def clip(xs, lo, hi):
    return [min(max(x, lo), hi) for x in xs]
