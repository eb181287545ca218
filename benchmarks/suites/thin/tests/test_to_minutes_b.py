from programs.to_minutes_b import to_minutes
def test_tm():
    assert to_minutes("01:30") == 90
