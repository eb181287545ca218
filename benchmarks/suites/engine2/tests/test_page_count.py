from programs.page_count import page_count

def test_none():
    assert page_count(0, 10) == 0

def test_exact():
    assert page_count(20, 10) == 2

def test_partial():
    assert page_count(21, 10) == 3

def test_one():
    assert page_count(1, 10) == 1
