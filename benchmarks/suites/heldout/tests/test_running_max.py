from programs.running_max import running_max
def test_running_max():
    assert running_max([1, 3, 2, 5]) == [1, 3, 3, 5]
