from programs.trimmed_mean import trimmed_mean
def test_trimmed_mean():
    assert trimmed_mean([1, 2, 3, 10]) == 2.5
