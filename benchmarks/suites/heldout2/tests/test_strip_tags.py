from programs.strip_tags import strip_tags
def test_strip_tags():
    assert strip_tags("<b>hi</b>") == "hi"
