from programs.pick_discount import pick_discount

def test_member():
    assert pick_discount(50, True) == 5

def test_big():
    assert pick_discount(200, False) == 10

def test_none():
    assert pick_discount(20, False) == 0
