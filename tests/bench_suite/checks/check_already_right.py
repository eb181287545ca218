from programs.already_right import already_right


def test_counts():
    assert already_right([1, 2, 3]) == 3
