from programs.pace import pace
def test_pace():
    assert pace(10, 3000) == "5:00"
    assert pace(5, 1525) == "5:05"
