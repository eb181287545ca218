from programs.parse_bool import parse_bool
def test_bool():
    assert parse_bool("True")
    assert not parse_bool("no")
