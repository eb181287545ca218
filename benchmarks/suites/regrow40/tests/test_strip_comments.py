from programs.strip_comments import strip_comments


def test_mixed():
    lines = ["x = 1", "# note", "  # indented", "", "y = 2  "]
    assert strip_comments(lines) == ["x = 1", "y = 2"]


def test_empty():
    assert strip_comments([]) == []


def test_whitespace_only():
    assert strip_comments(["   ", "\t"]) == []


def test_inline_hash_kept():
    assert strip_comments(["a  # not a comment"]) == ["a  # not a comment"]


def test_only_comments():
    assert strip_comments(["#a", "  #b"]) == []
