import pytest

from programs.number_to_words import number_to_words


def test_small():
    assert number_to_words(0) == "zero"
    assert number_to_words(7) == "seven"


def test_teens():
    assert number_to_words(13) == "thirteen"
    assert number_to_words(19) == "nineteen"


def test_round_tens():
    assert number_to_words(20) == "twenty"
    assert number_to_words(40) == "forty"


def test_compound():
    assert number_to_words(21) == "twenty-one"
    assert number_to_words(42) == "forty-two"
    assert number_to_words(99) == "ninety-nine"


def test_out_of_range():
    with pytest.raises(ValueError):
        number_to_words(100)
