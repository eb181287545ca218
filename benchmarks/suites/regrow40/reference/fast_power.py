def fast_power(base, exp):
    """base ** exp for integer exp >= 0 by recursive squaring."""
    if exp == 0:
        return 1
    half = fast_power(base, exp // 2)
    if exp % 2 == 0:
        return half * half
    return half * half * base
