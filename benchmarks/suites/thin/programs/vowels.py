def count_vowels(s):
    return sum(1 for ch in s if ch in "aeiou")
