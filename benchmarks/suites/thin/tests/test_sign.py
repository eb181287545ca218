from programs.sign import sign
def test_sign():
    assert sign(0) == 0
