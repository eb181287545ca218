from programs.word_total import word_total

def test_words():
    assert word_total("a bb ccc") == 3

def test_blank():
    assert word_total("   ") == 0

def test_none():
    assert word_total(None) == 0
