def is_pangram(s):
    letters = {c for c in s.lower() if "a" <= c <= "z"}
    return len(letters) == 26
