from programs.run_length import run_length
def test_run_length():
    assert run_length("aaabcc") == "a3b1c2"
