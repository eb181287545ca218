from programs.group_by_len import group_by_len
def test_group_by_len():
    assert group_by_len(["a", "bb", "cc"]) == {1: ["a"], 2: ["bb", "cc"]}
