from programs.is_balanced import is_balanced


def test_empty():
    assert is_balanced("") is True


def test_balanced():
    assert is_balanced("()") is True
    assert is_balanced("(()())") is True
    assert is_balanced("a+b") is True


def test_unclosed():
    assert is_balanced("((") is False
    assert is_balanced("(()") is False
    assert is_balanced("(a(b)c") is False


def test_wrong_order():
    assert is_balanced(")(") is False
