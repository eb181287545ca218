from programs.parse_table import parse_table


def test_empty():
    assert parse_table([]) == []


def test_header_only():
    assert parse_table(["a,b"]) == []


def test_one_row():
    assert parse_table(["a,b", "1,2"]) == [{"a": "1", "b": "2"}]


def test_stripping():
    rows = parse_table(["name, age", "ann, 30", "bob,4"])
    assert rows == [{"name": "ann", "age": "30"}, {"name": "bob", "age": "4"}]


def test_single_column():
    assert parse_table(["x", "1", "2"]) == [{"x": "1"}, {"x": "2"}]
