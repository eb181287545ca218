def initial_cap(word):
    """``word`` with its first letter upper-cased."""
    if not word:
        return word
    head = word[0].upper()
    return head + word[1:]
