from programs.mod_pow import mod_pow
def test_mod_pow():
    assert mod_pow(2, 10, 1000) == 24
