def bulk_price(unit_cents, qty):
    """Total in cents: 10% off from 10 items, 20% off from 100 items."""
    if qty >= 100:
        pct = 20
    elif qty > 10:
        pct = 10
    else:
        pct = 0
    return unit_cents * qty * (100 - pct) // 100
