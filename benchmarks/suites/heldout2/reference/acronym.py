def acronym(phrase):
    words = phrase.replace("-", " ").split()
    return "".join(w[0] for w in words).upper()
