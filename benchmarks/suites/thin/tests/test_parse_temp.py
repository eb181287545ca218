from programs.parse_temp import parse_temp
def test_t():
    assert parse_temp("20C") == 20.0
