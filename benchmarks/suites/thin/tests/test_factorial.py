from programs.factorial import factorial
def test_fact():
    assert factorial(5) == 120
