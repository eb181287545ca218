from programs.run_length_encode import run_length_encode


def test_empty():
    assert run_length_encode("") == ""


def test_single():
    assert run_length_encode("a") == "a1"


def test_mixed_runs():
    assert run_length_encode("aaabcc") == "a3b1c2"


def test_alternating():
    assert run_length_encode("abab") == "a1b1a1b1"


def test_long_run():
    assert run_length_encode("z" * 12) == "z12"
