from programs.bulk_price import bulk_price
def test_bulk_price():
    assert bulk_price(250, 2) == 500
    assert bulk_price(250, 10) == 2250
