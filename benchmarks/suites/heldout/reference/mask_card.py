def mask_card(s):
    return "*" * (len(s) - 4) + s[-4:]
