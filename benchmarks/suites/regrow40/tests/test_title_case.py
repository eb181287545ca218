from programs.title_case import title_case


def test_empty():
    assert title_case("") == ""


def test_plain():
    assert title_case("HELLO world") == "Hello World"


def test_small_words():
    assert title_case("the lord of the rings") == "The Lord of the Rings"
    assert title_case("war and peace") == "War and Peace"


def test_first_word_small():
    assert title_case("a tale of two cities") == "A Tale of Two Cities"


def test_last_word_small():
    assert title_case("where we go to") == "Where We Go To"
