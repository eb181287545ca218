from programs.harmonic import harmonic
def test_harmonic():
    assert round(harmonic(3), 4) == 1.8333
