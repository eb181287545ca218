from programs.insertion_sort import insertion_sort
def test_insertion_sort():
    assert insertion_sort([3, 1, 2]) == [1, 2, 3]
