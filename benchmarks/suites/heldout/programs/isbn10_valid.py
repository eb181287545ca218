def isbn10_valid(s):
    s = s.replace("-", "")
    if len(s) != 10:
        return False
    total = 0
    for i, c in enumerate(s):
        v = 10 if c == "X" and i == 9 else int(c)
        total += (9 - i) * v
    return total % 11 == 0
