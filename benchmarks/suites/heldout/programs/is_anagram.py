def is_anagram(a, b):
    x = sorted(a.replace(" ", "").lower())
    y = sorted(a.replace(" ", "").lower())
    return x == y
