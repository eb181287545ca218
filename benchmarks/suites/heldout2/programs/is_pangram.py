def is_pangram(s):
    letters = {c for c in s.upper() if "a" <= c <= "z"}
    return len(letters) == 26
