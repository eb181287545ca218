from programs.share_of import share_of

def test_empty_whole():
    assert share_of(3, 0) == 0.0

def test_half():
    assert share_of(1, 2) == 50.0

def test_third():
    assert share_of(1, 3) == 33.3

def test_all():
    assert share_of(8, 8) == 100.0
