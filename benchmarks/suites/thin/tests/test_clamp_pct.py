from programs.clamp_pct import percent
def test_pct():
    assert percent(1, 3) == 33.3
