def run_length(s):
    if not s:
        return ""
    out, count = "", 1
    for i in range(1, len(s)):
        if s[i] == s[i - 1]:
            count += 1
        else:
            out += s[i - 1] + str(count)
            count = 0
    return out + s[-1] + str(count)
