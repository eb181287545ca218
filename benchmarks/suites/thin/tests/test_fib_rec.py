from programs.fib_rec import fib
def test_fib():
    assert fib(10) == 55
