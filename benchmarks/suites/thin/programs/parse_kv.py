def parse_kv(s):
    out = {}
    for part in s.split(";"):
        if not part:
            continue
        k, v = part.split("=")
        out[k.strip()] = v.strip()
    return out
