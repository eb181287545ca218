from programs.squeeze_spaces import squeeze_spaces

def test_plain():
    assert squeeze_spaces("abc") == "abc"

def test_one_run():
    assert squeeze_spaces("a   b") == "a b"

def test_two_runs():
    assert squeeze_spaces("a  b  c") == "a b c"

def test_leading():
    assert squeeze_spaces("  x") == " x"
