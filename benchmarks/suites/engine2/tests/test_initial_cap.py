from programs.initial_cap import initial_cap

def test_word():
    assert initial_cap("python") == "Python"

def test_one_letter():
    assert initial_cap("a") == "A"

def test_already():
    assert initial_cap("Go") == "Go"

def test_empty():
    assert initial_cap("") == ""
