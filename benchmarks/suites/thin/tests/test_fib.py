from programs.fib import fib
def test_fib():
    assert fib(1) == 1
    assert fib(10) == 55
