import math


def shipping_cost(weight_kg):
    """Cents: 500 for the first kilogram, 200 for each further started kilogram."""
    if weight_kg <= 0:
        return 0
    extra = math.floor(weight_kg) - 1
    return 500 + 200 * extra
