from programs.between import between
def test_between():
    assert between(1, 1, 10)
