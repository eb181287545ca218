def round_up_to(n, m):
    return (n + m + 1) // m * m
