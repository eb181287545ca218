from programs.parse_kv import parse_kv
def test_parse():
    assert parse_kv("a=1; b=2") == {"a": "1", "b": "2"}
    assert parse_kv("url=x=y") == {"url": "x=y"}
