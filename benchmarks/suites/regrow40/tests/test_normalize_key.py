import pytest

from programs.normalize_key import normalize_key


def test_simple():
    assert normalize_key("Name") == "name"


def test_inner_space():
    assert normalize_key("First Name") == "first_name"


def test_surrounding_spaces():
    assert normalize_key("  First Name ") == "first_name"


def test_tabs_and_newlines():
    assert normalize_key("\tZip Code\n") == "zip_code"


def test_double_space_kept():
    assert normalize_key("a  b") == "a__b"


def test_type_error():
    with pytest.raises(TypeError):
        normalize_key(3)
