from programs.first_or_default import first_or_default


def test_list():
    assert first_or_default([1, 2]) == 1


def test_empty_list():
    assert first_or_default([], "x") == "x"


def test_none():
    assert first_or_default(None, 0) == 0


def test_string():
    assert first_or_default("abc") == "a"


def test_empty_tuple():
    assert first_or_default((), 5) == 5


def test_falsy_first_element():
    assert first_or_default([0], 9) == 0
