from programs.is_power_of import is_power_of
def test_is_power_of():
    assert is_power_of(81, 3)
    assert is_power_of(1, 5)
