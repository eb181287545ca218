from programs.is_valid_username import is_valid_username


def test_valid_names():
    assert is_valid_username("alice") is True
    assert is_valid_username("bob_99") is True
    assert is_valid_username("abc") is True
    assert is_valid_username("a" * 16) is True


def test_too_short():
    assert is_valid_username("ab") is False
    assert is_valid_username("") is False


def test_too_long():
    assert is_valid_username("a" * 17) is False


def test_leading_digit():
    assert is_valid_username("9lives") is False


def test_bad_characters():
    assert is_valid_username("no spaces") is False
    assert is_valid_username("dash-ed") is False
