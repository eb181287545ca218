from programs.is_armstrong import is_armstrong
def test_is_armstrong():
    assert is_armstrong(9474)
    assert not is_armstrong(9475)
