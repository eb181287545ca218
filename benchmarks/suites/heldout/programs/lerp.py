def lerp(a, b, t):
    return a + (a - b) * t
