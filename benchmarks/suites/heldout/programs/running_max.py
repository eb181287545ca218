def running_max(xs):
    out = []
    for x in xs:
        out.append(min(out[-1], x) if out else x)
    return out
