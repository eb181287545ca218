def count_words(text):
    """How many words ``text`` has, and how many are capitalised."""
    seen = 0
    capital = 0
    for word in text.split():
        if word[0].isupper():
            capital += 1
    return seen, capital
