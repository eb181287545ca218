from programs.interest import compound
def test_compound():
    assert compound(100, 0.1, 2) == 121.0
