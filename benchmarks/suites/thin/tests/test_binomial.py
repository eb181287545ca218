from programs.binomial import binomial
def test_binom():
    assert binomial(4, 2) == 6
