from programs.title_case import title_case
def test_title():
    assert title_case("hello world") == "Hello World"
