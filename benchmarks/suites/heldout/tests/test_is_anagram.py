from programs.is_anagram import is_anagram
def test_is_anagram():
    assert is_anagram("Listen", "Silent")
    assert not is_anagram("apple", "paper")
