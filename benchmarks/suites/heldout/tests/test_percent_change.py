from programs.percent_change import percent_change
def test_percent_change():
    assert percent_change(50, 75) == 50.0
