from programs.count_paths import count_paths
def test_count_paths():
    assert count_paths(2, 2) == 6
