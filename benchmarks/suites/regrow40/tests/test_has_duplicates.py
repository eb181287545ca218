from programs.has_duplicates import has_duplicates


def test_empty():
    assert has_duplicates([]) is False


def test_unique():
    assert has_duplicates([1, 2, 3]) is False
    assert has_duplicates([7]) is False


def test_numbers():
    assert has_duplicates([1, 2, 1]) is True
    assert has_duplicates([0, 0]) is True


def test_strings():
    assert has_duplicates(["a", "b", "a"]) is True
    assert has_duplicates(["a", "b"]) is False
