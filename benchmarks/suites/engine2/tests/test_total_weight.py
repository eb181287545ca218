from programs.total_weight import total_weight

def test_empty():
    assert total_weight([]) == 0

def test_some():
    assert total_weight([{"kg": 2}, {"kg": 5}]) == 7

def test_missing():
    assert total_weight([{"kg": 2}, None, {"kg": 1}]) == 3
