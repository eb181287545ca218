from programs.vowels import count_vowels
def test_v():
    assert count_vowels("Apple") == 2
