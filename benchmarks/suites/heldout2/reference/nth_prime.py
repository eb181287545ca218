def nth_prime(n):
    count, k = 0, 1
    while count < n:
        k += 1
        if all(k % d for d in range(2, int(k ** 0.5) + 1)):
            count += 1
    return k
