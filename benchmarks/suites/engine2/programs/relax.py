def relax(values, passes):
    """Each inner value replaced by the mean of its neighbours, ``passes`` times."""
    for _ in range(passes):
        relaxed = [values[0]]
        for i in range(1, len(values) - 1):
            relaxed.append((values[i - 1] + values[i + 1]) / 2)
        relaxed.append(values[-1])
    return values
