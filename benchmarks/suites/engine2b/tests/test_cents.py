from programs.cents import cents

def test_zero():
    assert cents(0) == 0

def test_whole():
    assert cents(3) == 300

def test_fraction():
    assert cents(2.5) == 250

def test_small():
    assert cents(0.07) == 7
