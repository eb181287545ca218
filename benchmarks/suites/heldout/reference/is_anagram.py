def is_anagram(a, b):
    x = sorted(a.replace(" ", "").lower())
    y = sorted(b.replace(" ", "").lower())
    return x == y
