from programs.roman import to_roman
def test_roman():
    assert to_roman(1994) == "MCMXCIV"
