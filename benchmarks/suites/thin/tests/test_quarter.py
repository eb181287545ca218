from programs.quarter import quarter
def test_quarter():
    assert quarter(1) == 1
    assert quarter(12) == 4
