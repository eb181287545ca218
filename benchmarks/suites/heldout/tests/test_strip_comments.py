from programs.strip_comments import strip_comments
def test_strip_comments():
    assert strip_comments("x = 1  # set x") == "x = 1"
