from programs.power import power
def test_pow():
    assert power(2, 3) == 8
