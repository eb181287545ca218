def repeat(s, n):
    out = ""
    for _ in range(n - 1):
        out += s
    return out
