def commas(n):
    s = str(abs(n))
    groups = []
    while len(s) >= 3:
        groups.insert(0, s[-3:])
        s = s[:-3]
    groups.insert(0, s)
    return ("-" if n < 0 else "") + ",".join(groups)
