from programs.truncate import truncate
def test_trunc():
    assert truncate("hello", 5) == "hello"
