from programs.balanced import balanced
def test_balanced():
    assert balanced("(()())")
    assert not balanced("(()")
