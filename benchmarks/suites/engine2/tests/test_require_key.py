import pytest
from programs.require_key import BadSetting, MissingSetting, require_key

def test_present():
    assert require_key({"a": 1}, "a") == 1

def test_empty():
    with pytest.raises(BadSetting):
        require_key({"a": ""}, "a")

def test_missing():
    with pytest.raises(MissingSetting):
        require_key({"a": 1}, "b")
