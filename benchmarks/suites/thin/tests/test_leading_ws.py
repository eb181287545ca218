from programs.leading_ws import indent_of
def test_ind():
    assert indent_of("    x = 1") == 4
