from programs.sum_csv import sum_csv
def test_sc():
    assert sum_csv("1,2,3") == 6
