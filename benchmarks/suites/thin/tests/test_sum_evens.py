from programs.sum_evens import sum_evens
def test_se():
    assert sum_evens([1, 2, 3, 4]) == 6
