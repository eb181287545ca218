from programs.parse_hm import to_minutes
def test_tm():
    assert to_minutes("02:01") == 121
