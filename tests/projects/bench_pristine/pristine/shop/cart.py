from .money import cents


def total(prices, tax_rate):
    """The sum of the prices with tax_rate percent added, in whole cents."""
    subtotal = sum(prices)
    return cents(subtotal + subtotal * tax_rate / 100)
