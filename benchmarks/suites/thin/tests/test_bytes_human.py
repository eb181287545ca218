from programs.bytes_human import human_size
def test_kb():
    assert human_size(1024) == "1.0 KB"
