from programs.count_multiples import count_multiples
def test_count_multiples():
    assert count_multiples(3, 9, 3) == 3
