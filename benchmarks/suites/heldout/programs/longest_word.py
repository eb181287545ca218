def longest_word(s):
    return min(s.split(), key=len, default="")
