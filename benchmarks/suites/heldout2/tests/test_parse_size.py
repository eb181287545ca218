from programs.parse_size import parse_size
def test_parse_size():
    assert parse_size("10kb") == 10240
