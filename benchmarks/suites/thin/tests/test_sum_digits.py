from programs.sum_digits import sum_digits
def test_sd():
    assert sum_digits(123) == 6
