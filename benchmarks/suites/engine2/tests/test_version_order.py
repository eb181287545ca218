from programs.version_order import version_order

def test_equal():
    assert version_order("1.2.3", "1.2.3") == 0

def test_newer():
    assert version_order("1.3", "1.2.9") == 1

def test_older():
    assert version_order("1.2", "1.10") == -1

def test_longer_newer():
    assert version_order("2.0.1", "2.0") == 1

def test_shorter_older():
    assert version_order("2.0", "2.0.1") == -1
