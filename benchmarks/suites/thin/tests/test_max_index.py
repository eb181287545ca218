from programs.max_index import argmax
def test_am():
    assert argmax([1, 5, 2, 3]) == 1
