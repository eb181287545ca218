from programs.dedupe_preserve_order import dedupe_preserve_order


def test_empty():
    assert dedupe_preserve_order([]) == []


def test_order_kept():
    assert dedupe_preserve_order([3, 1, 3, 2, 1]) == [3, 1, 2]


def test_strings():
    assert dedupe_preserve_order(["b", "a", "b"]) == ["b", "a"]


def test_already_unique():
    assert dedupe_preserve_order([1, 2, 3]) == [1, 2, 3]
    assert dedupe_preserve_order([2, 1]) == [2, 1]


def test_all_same():
    assert dedupe_preserve_order([5, 5, 5]) == [5]
