from programs.levenshtein import levenshtein


def test_identical():
    assert levenshtein("", "") == 0
    assert levenshtein("abc", "abc") == 0


def test_against_empty():
    assert levenshtein("abc", "") == 3
    assert levenshtein("", "ab") == 2


def test_shifted():
    assert levenshtein("flaw", "lawn") == 2
    assert levenshtein("abcdef", "bcdef") == 1


def test_classic():
    assert levenshtein("kitten", "sitting") == 3
    assert levenshtein("sunday", "saturday") == 3
