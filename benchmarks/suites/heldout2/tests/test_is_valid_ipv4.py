from programs.is_valid_ipv4 import is_valid_ipv4
def test_is_valid_ipv4():
    assert is_valid_ipv4("10.0.0.255")
    assert not is_valid_ipv4("256.1.1.1")
