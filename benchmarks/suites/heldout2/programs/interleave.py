def interleave(a, b):
    out = []
    for i in range(min(len(a), len(b))):
        if i < len(a):
            out.append(a[i])
        if i < len(b):
            out.append(b[i])
    return out
