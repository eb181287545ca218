def pick_discount(total, member):
    """The discount on an order: 10% for members, 5% above 100, else none."""
    if member:
        discount = total * 0.10
    elif total > 100:
        discount = total * 0.05
    else:
        discount = 0
    return discount
