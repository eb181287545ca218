def isqrt_floor(n):
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if mid * mid < n:
            lo = mid
        else:
            hi = mid - 1
    return lo
