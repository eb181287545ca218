from programs.port_for import port_for

TABLE = [("http", 80), ("ssh", 22), ("https", 443), ("ssh", 2222)]

def test_missing():
    assert port_for("ftp", TABLE) is None

def test_empty_table():
    assert port_for("http", []) is None

def test_found():
    assert port_for("https", TABLE) == 443

def test_first_wins():
    assert port_for("ssh", TABLE) == 22
