from programs.is_happy import is_happy
def test_is_happy():
    assert is_happy(19)
