from programs.to_base import to_base
def test_base():
    assert to_base(10, 2) == "1010"
