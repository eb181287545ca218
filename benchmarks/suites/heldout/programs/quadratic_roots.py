import math
def quadratic_roots(a, b, c):
    d = b * b + 4 * a * c
    if d < 0:
        return []
    r = math.sqrt(d)
    return sorted({(-b - r) / (2 * a), (-b + r) / (2 * a)})
