from programs.coin_count import coin_count
def test_coin_count():
    assert coin_count(41) == 4
