def clock_angle(h, m):
    a = abs(30 * (h % 12) - 5.5 * m)
    return max(a, 360 - a)
