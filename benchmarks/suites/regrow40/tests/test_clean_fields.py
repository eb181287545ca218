from programs.clean_fields import clean_fields


def test_empty():
    assert clean_fields({}) == {}


def test_key_stripped():
    assert clean_fields({" a ": "1"}) == {"a": "1"}


def test_value_stripped():
    assert clean_fields({"a": " x "}) == {"a": "x"}


def test_blank_key_dropped():
    assert clean_fields({"  ": "v"}) == {}


def test_both():
    assert clean_fields({"name": "Ann  ", " age": "\t30\n"}) == {"name": "Ann", "age": "30"}
