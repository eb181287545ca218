from programs.parse_endpoint import parse_endpoint

def test_both():
    assert parse_endpoint("example.org:443") == ("example.org", 443)

def test_no_host():
    assert parse_endpoint(":9000") == ("localhost", 9000)

def test_no_port():
    assert parse_endpoint("example.org") == ("example.org", 8080)

def test_nothing():
    assert parse_endpoint("") == ("localhost", 8080)
