def invert_dict(d):
    inv = {}
    for k, v in d.items():
        inv.setdefault(v, []).append(k)
    return inv
