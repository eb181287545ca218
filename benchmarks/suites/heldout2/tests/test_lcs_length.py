from programs.lcs_length import lcs_length
def test_lcs_length():
    assert lcs_length("abcde", "ace") == 3
    assert lcs_length("aa", "a") == 1
