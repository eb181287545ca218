from programs.quarter3 import quarter
def test_quarter():
    assert quarter(1) == 1
    assert quarter(4) == 2
    assert quarter(12) == 4
