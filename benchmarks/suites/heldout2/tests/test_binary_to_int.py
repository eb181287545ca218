from programs.binary_to_int import binary_to_int
def test_binary_to_int():
    assert binary_to_int("0b101") == 5
