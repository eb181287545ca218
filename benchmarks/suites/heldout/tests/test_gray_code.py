from programs.gray_code import gray_code
def test_gray_code():
    assert gray_code(0) == 0
    assert gray_code(3) == 2
