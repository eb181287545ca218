from programs.parse_query import parse_query
def test_parse_query():
    assert parse_query("a=1&b=2") == {"a": "1", "b": "2"}
    assert parse_query("token=ab==&x=1") == {"token": "ab==", "x": "1"}
