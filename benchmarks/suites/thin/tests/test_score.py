from programs.score import result
def test_draw():
    assert result("2-2") == "draw"
