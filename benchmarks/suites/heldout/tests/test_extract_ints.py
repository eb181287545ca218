from programs.extract_ints import extract_ints
def test_extract_ints():
    assert extract_ints("3 apples and 12") == [3, 12]
