from wordcount import count_words


def test_three_words():
    assert count_words("the quick fox") == 3


def test_empty():
    assert count_words("") == 0
