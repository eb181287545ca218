from programs.tribonacci import tribonacci
def test_tribonacci():
    assert tribonacci(6) == 7
