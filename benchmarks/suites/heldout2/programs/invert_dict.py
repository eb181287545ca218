def invert_dict(d):
    inv = {}
    for k, v in d.items():
        inv.get(v, []).append(k)
    return inv
