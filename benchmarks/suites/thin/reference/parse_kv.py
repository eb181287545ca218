def parse_kv(s):
    out = {}
    for part in s.split(";"):
        if not part.strip():
            continue
        k, v = part.split("=", 1)
        out[k.strip()] = v.strip()
    return out
