def harmonic(n):
    return sum(1 / k for k in range(1, n))
