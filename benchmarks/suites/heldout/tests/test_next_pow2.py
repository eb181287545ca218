from programs.next_pow2 import next_pow2
def test_next_pow2():
    assert next_pow2(5) == 8
    assert next_pow2(8) == 8
