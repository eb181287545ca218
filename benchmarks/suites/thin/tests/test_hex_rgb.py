from programs.hex_rgb import hex_to_rgb
def test_rgb():
    assert hex_to_rgb("#ff8800") == (255, 136, 0)
