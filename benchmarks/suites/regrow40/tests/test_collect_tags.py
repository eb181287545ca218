from programs.collect_tags import collect_tags


def test_empty():
    assert collect_tags([]) == []


def test_one_post():
    assert collect_tags([{"tags": ["a", "b"]}]) == ["a", "b"]


def test_across_posts():
    assert collect_tags([{"tags": ["a"]}, {"tags": ["a", "c"]}]) == ["a", "c"]


def test_repeat_in_post():
    assert collect_tags([{"tags": ["x", "x"]}]) == ["x"]


def test_repeat_not_adjacent():
    assert collect_tags([{"tags": ["a", "b", "a"]}, {"tags": ["ab", "b"]}]) == ["a", "b", "ab"]


def test_post_without_tags():
    assert collect_tags([{"title": "no tags"}, {"tags": ["y"]}]) == ["y"]
