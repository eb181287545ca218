from programs.shared_state import REGISTRY, register, scaled


def test_starts_empty():
    # Passes in a fresh process; fails once test_register ran before it in the same one.
    assert REGISTRY == []


def test_register():
    assert register("a") >= 1


def test_scaled():
    assert scaled([1, 2], 3) == [3, 6]
    assert scaled([], 5) == []
    assert scaled([4], 0) == [0]
