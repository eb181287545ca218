from programs.isbn10_valid import isbn10_valid
def test_isbn10_valid():
    assert isbn10_valid("0-306-40615-2")
    assert not isbn10_valid("0-306-40615-3")
