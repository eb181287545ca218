from programs.parse_ranges import parse_ranges
def test_parse_ranges():
    assert parse_ranges("1-3,5") == [1, 2, 3, 5]
