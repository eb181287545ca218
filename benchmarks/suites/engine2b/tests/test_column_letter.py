from programs.column_letter import column_letter

def test_first():
    assert column_letter(1) == "A"

def test_last_single():
    assert column_letter(26) == "Z"

def test_double():
    assert column_letter(27) == "AA"

def test_later():
    assert column_letter(52) == "AZ"
