from programs.digital_root import digital_root
def test_digital_root():
    assert digital_root(19) == 1
    assert digital_root(493193) == 2
