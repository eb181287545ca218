from programs.count_words import count_words

def test_empty():
    assert count_words("") == (0, 0)

def test_lower():
    assert count_words("a b c") == (3, 0)

def test_mixed():
    assert count_words("Ada met Grace") == (3, 2)
