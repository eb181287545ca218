from programs.common_prefix import common_prefix
def test_common_prefix():
    assert common_prefix(["flower", "flow", "flight"]) == "fl"
