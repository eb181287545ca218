from programs.first_line import first_line

def test_one():
    assert first_line("  hello ") == "hello"

def test_many():
    assert first_line("a\nb") == "a"

def test_empty():
    assert first_line("") == ""
