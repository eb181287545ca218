from programs.hamming_bits import hamming_bits
def test_hamming_bits():
    assert hamming_bits(3, 1) == 1
