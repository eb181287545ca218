from programs.format_phone import format_phone
def test_format_phone():
    assert format_phone("1 555 123 4567") == "(555) 123-4567"
