from programs.pass_rate import pass_rate
def test_rate():
    assert pass_rate([50, 40]) == 0.5
