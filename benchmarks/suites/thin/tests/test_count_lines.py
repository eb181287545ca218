from programs.count_lines import count_lines
def test_cl():
    assert count_lines("a\nb") == 2
