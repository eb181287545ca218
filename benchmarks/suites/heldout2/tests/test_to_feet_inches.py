from programs.to_feet_inches import to_feet_inches
def test_to_feet_inches():
    assert to_feet_inches(180) == (5, 11)
