from programs.pluralize import pluralize
def test_pluralize():
    assert pluralize("cat", 1) == "1 cat"
    assert pluralize("cat", 0) == "0 cats"
