from programs.longest_run import longest_run
def test_longest_run():
    assert longest_run([1, 2, 3, 1, 2]) == 3
