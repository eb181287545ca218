def flatten_keys(d, prefix=""):
    out = {}
    for k, v in d.items():
        key = prefix + "." + k if prefix else k
        if isinstance(v, dict):
            out.update(flatten_keys(v, k))
        else:
            out[key] = v
    return out
