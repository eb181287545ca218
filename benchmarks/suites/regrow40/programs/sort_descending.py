def sort_descending(xs):
    """New list with the items of xs in descending order."""
    xs = list(xs)
    for i in range(len(xs)):
        for j in range(i + 1, len(xs)):
            if xs[j] < xs[i]:
                xs[i] = xs[j]
    return xs
