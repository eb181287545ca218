def camel_words(s):
    words, start = [], 0
    for i in range(1, len(s)):
        if s[i].isupper():
            words.append(s[start:i])
            start = i
    if s:
        words.append(s[start:])
    return words
