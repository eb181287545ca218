from programs.hms import hms
def test_hms():
    assert hms(3661) == "01:01:01"
