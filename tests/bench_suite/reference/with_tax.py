def with_tax(price, rate):
    """Price plus tax at ``rate`` percent, rounded to cents."""
    return round(price + price * rate / 100, 2)
