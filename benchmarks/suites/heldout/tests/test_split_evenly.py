from programs.split_evenly import split_evenly
def test_split_evenly():
    assert split_evenly(10, 3) == [4, 3, 3]
