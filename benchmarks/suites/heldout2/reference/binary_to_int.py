def binary_to_int(s):
    s = s.strip()
    if s.startswith("0b"):
        s = s[2:]
    value = 0
    for ch in s:
        value = value * 2 + int(ch)
    return value
