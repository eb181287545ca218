from programs.round_up_to import round_up_to
def test_round_up_to():
    assert round_up_to(12, 5) == 15
    assert round_up_to(10, 5) == 10
