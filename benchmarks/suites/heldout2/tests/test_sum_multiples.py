from programs.sum_multiples import sum_multiples
def test_sum_multiples():
    assert sum_multiples(10) == 23
