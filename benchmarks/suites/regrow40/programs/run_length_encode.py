def run_length_encode(s):
    """'aaabcc' -> 'a3b1c2'."""
    out = []
    i = 0
    while i < len(s):
        j = i
        while j < len(s) and s[j] == s[i]:
            j += 1
        out.append(s[i] + str(j - i + 1))
        i = j
    return "".join(out)
