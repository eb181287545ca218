from programs.render_cell import render_cell

def test_text():
    assert render_cell("ab", 4) == "ab  "

def test_number():
    assert render_cell(1234, 7) == "  1,234"

def test_small_number():
    assert render_cell(5, 3) == "  5"
