from programs.money import fmt_money
def test_money():
    assert fmt_money(1999) == "$19.99"
