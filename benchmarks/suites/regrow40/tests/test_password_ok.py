from programs.password_ok import password_ok


def test_good():
    assert password_ok("Secret123") is True
    assert password_ok("ABCDEFG1") is True


def test_missing_upper():
    assert password_ok("secret123") is False
    assert password_ok("12345678") is False


def test_missing_digit():
    assert password_ok("SecretPass") is False


def test_too_short():
    assert password_ok("Sh0rt") is False


def test_space():
    assert password_ok("Has Space1A") is False


def test_custom_length():
    assert password_ok("Aa1", min_len=3) is True
