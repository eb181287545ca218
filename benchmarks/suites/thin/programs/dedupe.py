def dedupe(xs):
    seen = set()
    out = []
    for x in xs:
        if x not in out:
            seen.add(x)
            out.append(x)
    return out[1:]
