from programs.kebab_case import kebab_case

def test_one_word():
    assert kebab_case("Hello") == "hello"

def test_empty():
    assert kebab_case("") == ""

def test_spaces():
    assert kebab_case("Hello big World") == "hello-big-world"

def test_underscores():
    assert kebab_case("snake_case here") == "snake-case-here"
