from programs.discount import discount
def test_d():
    assert discount(200, 50) == 100
