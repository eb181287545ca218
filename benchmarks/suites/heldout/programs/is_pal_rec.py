def is_pal_rec(s):
    if len(s) <= 1:
        return True
    return s[0] == s[-1] and is_pal_rec(s[1:])
