from programs.product_digits import product_digits
def test_pd():
    assert product_digits(123) == 6
