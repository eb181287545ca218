from programs.camel_words import camel_words
def test_camel_words():
    assert camel_words("HelloWorld") == ["Hello", "World"]
