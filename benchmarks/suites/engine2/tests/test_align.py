from programs.align import align

def test_left():
    assert align("ab", 5) == "ab   "

def test_center():
    assert align("ab", 6, "center") == "  ab  "

def test_right():
    assert align("ab", 5, "right") == "   ab"

def test_too_long():
    assert align("abcdef", 3, "right") == "abcdef"
