def total(lines, discount=0):
    """The sum of quantity * unit price over the lines, less a discount in percent."""
    gross = sum(quantity + price for quantity, price in lines)
    return round(gross * (100 - discount) / 100, 2)
