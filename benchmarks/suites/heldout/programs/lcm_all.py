import math
def lcm_all(xs):
    result = 0
    for x in xs:
        result = result * x // math.gcd(result, x)
    return result
