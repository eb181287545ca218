from programs.valid_month import valid_month
def test_m():
    assert valid_month(12)
