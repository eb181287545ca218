from programs.safe_div import safe_div
def test_div():
    assert safe_div(1, 0) == 0
