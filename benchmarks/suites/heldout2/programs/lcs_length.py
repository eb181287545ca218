def lcs_length(a, b):
    """Length of the longest common subsequence of a and b."""
    prev = [0] * (len(b) + 1)
    for ca in a:
        cur = [0]
        for j, cb in enumerate(b):
            if ca == cb:
                cur.append(prev[j + 1] + 1)
            else:
                cur.append(max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]
