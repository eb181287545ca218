from programs.collapse_runs import collapse_runs
def test_collapse_runs():
    assert collapse_runs([1, 1, 2, 3, 3]) == [1, 2, 3]
