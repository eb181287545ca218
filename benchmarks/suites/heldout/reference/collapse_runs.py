def collapse_runs(xs):
    return [x for i, x in enumerate(xs) if i == 0 or x != xs[i - 1]]
