def apply_coupon(price, code):
    pct = int(code[5:])
    return price * (100 - pct) / 100
