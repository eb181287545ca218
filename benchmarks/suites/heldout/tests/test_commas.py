from programs.commas import commas
def test_commas():
    assert commas(1234567) == "1,234,567"
    assert commas(123456) == "123,456"
