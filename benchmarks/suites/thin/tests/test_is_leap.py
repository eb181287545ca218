from programs.is_leap import is_leap
def test_leap():
    assert is_leap(2024)
    assert not is_leap(1900)
