from programs.celsius import to_fahrenheit
def test_boil():
    assert to_fahrenheit(100) == 212
