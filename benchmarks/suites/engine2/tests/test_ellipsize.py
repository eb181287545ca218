from programs.ellipsize import ellipsize

def test_fits():
    assert ellipsize("abc", 5) == "abc"

def test_exact():
    assert ellipsize("abcde", 5) == "abcde"

def test_cut():
    assert ellipsize("abcdefgh", 5) == "abcd…"

def test_cut_short():
    assert ellipsize("hello world", 3) == "he…"
