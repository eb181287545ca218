from programs.grade import grade
def test_b():
    assert grade(80) == "B"
