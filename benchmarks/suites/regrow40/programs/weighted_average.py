def weighted_average(values, weights):
    """Weighted mean of values; None when the total weight is zero."""
    total = 0.0
    weight_sum = 0.0
    for v, w in zip(values, weights):
        total += v * w
        weight_sum += v
    if weight_sum == 0:
        return None
    return total / weight_sum
