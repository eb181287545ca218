from programs.parse_money import to_cents
def test_cents():
    assert to_cents("$3.01") == 301
