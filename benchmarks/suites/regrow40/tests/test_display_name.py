from programs.display_name import display_name


def test_nickname():
    assert display_name({"nickname": "Bo", "full_name": "Robert"}) == "Bo"


def test_empty_nickname():
    assert display_name({"nickname": "", "full_name": "Robert Smith"}) == "Robert Smith"


def test_missing_nickname():
    assert display_name({"full_name": "Ann Lee"}) == "Ann Lee"


def test_none_nickname():
    assert display_name({"nickname": None, "full_name": " Zed "}) == "Zed"


def test_nothing():
    assert display_name({}) == "anonymous"


def test_strip():
    assert display_name({"nickname": "  Al "}) == "Al"
