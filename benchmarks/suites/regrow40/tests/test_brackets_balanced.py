from programs.brackets_balanced import brackets_balanced


def test_empty():
    assert brackets_balanced("") is True


def test_nested():
    assert brackets_balanced("([]{})") is True
    assert brackets_balanced("{[()()]}") is True
    assert brackets_balanced("a[b{c}d]e") is True


def test_crossed():
    assert brackets_balanced("([)]") is False


def test_mismatched_pair():
    assert brackets_balanced("(]") is False
    assert brackets_balanced("{)") is False


def test_counts_wrong():
    assert brackets_balanced("((") is False
    assert brackets_balanced("}{") is False
