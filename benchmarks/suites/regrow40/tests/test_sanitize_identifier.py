from programs.sanitize_identifier import sanitize_identifier


def test_clean():
    assert sanitize_identifier("abc") == "abc"
    assert sanitize_identifier("snake_case") == "snake_case"


def test_dash():
    assert sanitize_identifier("my-var") == "my_var"


def test_space_and_dot():
    assert sanitize_identifier("a b.c") == "a_b_c"


def test_leading_digit():
    assert sanitize_identifier("9lives") == "_9lives"


def test_empty():
    assert sanitize_identifier("") == ""


def test_trailing_symbol():
    assert sanitize_identifier("x!") == "x_"
