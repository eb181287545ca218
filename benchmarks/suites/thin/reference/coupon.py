def apply_coupon(price, code):
    pct = int(code[4:])
    return price * (100 - pct) / 100
