import pytest
from tally.stats import mean


@pytest.mark.heal(target="tally.stats.mean")
def test_one_value():
    assert mean([4]) == 4


@pytest.mark.heal(target="tally.stats.mean")
def test_several_values():
    assert mean([1, 2, 3, 6]) == 3


@pytest.mark.heal(target="tally.stats.mean")
def test_an_empty_sequence_has_no_mean():
    # The docstring says non-empty: without this test, fixes that differ only on [] are equally right
    # to the engine, and it abstains (docs/engine.md, "When the engine abstains").
    with pytest.raises(ZeroDivisionError):
        mean([])
