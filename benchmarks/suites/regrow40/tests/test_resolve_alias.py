from programs.resolve_alias import resolve_alias


def test_no_alias():
    assert resolve_alias({}, "x") == "x"


def test_one_hop():
    assert resolve_alias({"a": "b"}, "a") == "b"


def test_chain():
    assert resolve_alias({"a": "b", "b": "c"}, "a") == "c"
    assert resolve_alias({"ll": "ls", "ls": "ls -G"}, "ll") == "ls -G"


def test_cycle_stops():
    assert resolve_alias({"a": "b", "b": "a"}, "a") == "a"
    assert resolve_alias({"s": "s"}, "s") == "s"
