from programs.strip_prefix import strip_prefix
def test_sp():
    assert strip_prefix("v1.2", "v") == "1.2"
