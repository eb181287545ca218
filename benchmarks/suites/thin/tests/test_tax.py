from programs.tax import tax
def test_tax():
    assert tax(20000) == 2000
