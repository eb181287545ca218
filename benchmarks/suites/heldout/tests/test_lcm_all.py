from programs.lcm_all import lcm_all
def test_lcm_all():
    assert lcm_all([4, 6]) == 12
    assert lcm_all([3, 5]) == 15
