def repeat(s, n):
    out = ""
    for _ in range(n):
        out += s
    return out
