def count_occurrences(s, sub):
    n = 0
    for i in range(len(s) - len(sub) + 1):
        if s[i:i + len(sub)] == sub:
            n += 1
    return n
