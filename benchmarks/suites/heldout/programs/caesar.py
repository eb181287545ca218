def caesar(s, k):
    out = []
    for c in s:
        if c.islower():
            out.append(chr((ord(c) - 97 + k) % 26 + 96))
        elif c.isupper():
            out.append(chr((ord(c) - 65 + k) % 26 + 65))
        else:
            out.append(c)
    return "".join(out)
