import pytest
from programs.lookup_user import lookup_user

def test_known():
    assert lookup_user(1) == "ada"

def test_other():
    assert lookup_user(2) == "grace"

def test_unknown():
    with pytest.raises(LookupError):
        lookup_user(9)
