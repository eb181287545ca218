from programs.within import within

def test_inside():
    assert within(5, 1, 9)

def test_outside():
    assert not within(0, 1, 9)
    assert not within(10, 1, 9)

def test_low_edge():
    assert within(1, 1, 9)

def test_high_edge():
    assert within(9, 1, 9)
