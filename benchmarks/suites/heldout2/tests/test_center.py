from programs.center import center
def test_center():
    assert center("ab", 5, "*") == "*ab**"
