def histogram(xs, width):
    bins = {}
    for x in xs:
        b = x // width * width
        bins[b] = bins.get(b, 0) + x
    return bins
