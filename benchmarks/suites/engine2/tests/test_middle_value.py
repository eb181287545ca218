from programs.middle_value import middle_value

def test_one():
    assert middle_value([5]) == 5

def test_sorted_odd():
    assert middle_value([1, 2, 3]) == 2

def test_unsorted_odd():
    assert middle_value([9, 1, 4]) == 4

def test_unsorted_even():
    assert middle_value([8, 2, 6, 4]) == 5
