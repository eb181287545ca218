from programs.abbreviate import abbreviate


def test_three_names():
    assert abbreviate("John Ronald Tolkien") == "J. R. Tolkien"


def test_single_name():
    assert abbreviate("Plato") == "Plato"


def test_empty():
    assert abbreviate("") == ""
    assert abbreviate("   ") == ""


def test_lowercase_input():
    assert abbreviate("ada lovelace") == "A. lovelace"


def test_extra_spaces():
    assert abbreviate("  Grace  Brewster Hopper ") == "G. B. Hopper"
