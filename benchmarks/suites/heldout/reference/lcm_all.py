import math
def lcm_all(xs):
    result = 1
    for x in xs:
        result = result * x // math.gcd(result, x)
    return result
