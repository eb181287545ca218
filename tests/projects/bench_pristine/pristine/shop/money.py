def cents(amount):
    """An amount rounded to whole cents."""
    return round(amount, 2)
