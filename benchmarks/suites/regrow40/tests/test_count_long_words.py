from programs.count_long_words import count_long_words


def test_basic():
    assert count_long_words("a bb ccc", 2) == 2


def test_punctuation():
    assert count_long_words("hello, world!", 5) == 2


def test_apostrophe():
    assert count_long_words("don't stop", 4) == 2


def test_digits_count_as_characters():
    assert count_long_words("room 1234 ok", 4) == 2


def test_hyphenated():
    assert count_long_words("x-ray e-mail", 5) == 2


def test_empty():
    assert count_long_words("", 1) == 0
