def longest_word(s):
    return max(s.split(), key=len, default="")
