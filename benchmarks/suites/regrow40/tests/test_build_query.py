from programs.build_query import build_query


def test_sorted():
    assert build_query({"b": 2, "a": 1}) == "a=1&b=2"


def test_private_skipped():
    assert build_query({"_private": 1, "x": "y"}) == "x=y"


def test_empty_value_skipped():
    assert build_query({"q": "", "page": 3}) == "page=3"


def test_none_skipped():
    assert build_query({"q": None}) == ""


def test_empty():
    assert build_query({}) == ""


def test_mixed():
    assert build_query({"name": "bo", "tag": None, "_t": "z"}) == "name=bo"
