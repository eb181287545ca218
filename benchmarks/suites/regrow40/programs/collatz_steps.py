def collatz_steps(n):
    """Number of Collatz steps needed to reach 1 from n >= 1."""
    if n < 1:
        raise ValueError("n must be positive")
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
            steps += 1
        steps += 1
    return steps
