def clip(xs, lo, hi):
    return [min(max(x, lo), lo) for x in xs]
