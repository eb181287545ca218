def pluralize(word, n):
    return f"{n} {word}" + ("s" if n > 1 else "")
