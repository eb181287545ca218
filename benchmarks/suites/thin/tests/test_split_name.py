from programs.split_name import split_name
def test_split():
    assert split_name("Ada Lovelace") == ("Ada", "Lovelace")
