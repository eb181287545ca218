def weighted_avg(values, weights):
    return sum(v * w for v, w in zip(values, weights)) / len(values)
