def argmax(xs):
    best = 0
    for i in range(1, len(xs)):
        if xs[i] > xs[i - 1]:
            best = i
    return best
