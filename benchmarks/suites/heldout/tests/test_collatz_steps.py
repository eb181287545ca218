from programs.collatz_steps import collatz_steps
def test_collatz_steps():
    assert collatz_steps(6) == 8
