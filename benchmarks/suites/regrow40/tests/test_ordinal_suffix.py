from programs.ordinal_suffix import ordinal_suffix


def test_first_few():
    assert [ordinal_suffix(n) for n in (1, 2, 3, 4)] == ["st", "nd", "rd", "th"]


def test_teens():
    assert [ordinal_suffix(n) for n in (11, 12, 13, 14)] == ["th", "th", "th", "th"]


def test_twenties():
    assert [ordinal_suffix(n) for n in (21, 22, 23, 24)] == ["st", "nd", "rd", "th"]


def test_hundreds():
    assert [ordinal_suffix(n) for n in (101, 111, 112, 113, 123)] == ["st", "th", "th", "th", "rd"]


def test_zero():
    assert ordinal_suffix(0) == "th"
