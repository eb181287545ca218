from programs.camel_snake import camel_to_snake
def test_cs():
    assert camel_to_snake("aB") == "a_b"
