from programs.insert_at import insert_at

def test_front():
    assert insert_at([3, 5, 7], 1) == 0

def test_middle():
    assert insert_at([3, 5, 7], 6) == 2

def test_after_equal():
    assert insert_at([3, 5, 5, 7], 5) == 3

def test_end():
    assert insert_at([3, 5, 7], 9) == 3

def test_empty():
    assert insert_at([], 4) == 0
