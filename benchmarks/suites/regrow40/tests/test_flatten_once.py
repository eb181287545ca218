from programs.flatten_once import flatten_once


def test_empty():
    assert flatten_once([]) == []


def test_flat():
    assert flatten_once([1, 2]) == [1, 2]


def test_one_level():
    assert flatten_once([[1, 2], 3]) == [1, 2, 3]
    assert flatten_once([(1, 2), [3], []]) == [1, 2, 3]


def test_only_one_level():
    assert flatten_once([[1, [2]]]) == [1, [2]]


def test_strings_not_split():
    assert flatten_once(["ab", ["c"]]) == ["ab", "c"]
