from programs.pairwise_diffs import pairwise_diffs
def test_pairwise_diffs():
    assert pairwise_diffs([1, 4, 9, 16]) == [3, 5, 7]
