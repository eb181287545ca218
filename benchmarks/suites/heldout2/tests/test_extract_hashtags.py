from programs.extract_hashtags import extract_hashtags
def test_extract_hashtags():
    assert extract_hashtags("ship it #a #Release") == ["a", "release"]
