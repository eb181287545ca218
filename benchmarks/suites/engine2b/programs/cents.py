def cents(amount):
    """A euro amount in whole cents, rounded."""
    return int(round(amount * 10))
