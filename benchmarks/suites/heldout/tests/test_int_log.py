from programs.int_log import int_log
def test_int_log():
    assert int_log(1000, 10) == 3
