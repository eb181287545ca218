def initial_cap(word):
    """``word`` with its first letter upper-cased."""
    head = word[0].upper()
    return head + word[1:]
