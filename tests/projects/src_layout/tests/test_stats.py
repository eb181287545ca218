import pytest
from tally.stats import mean


@pytest.mark.heal(target="tally.stats.mean")
def test_one_value():
    assert mean([4]) == 4


@pytest.mark.heal(target="tally.stats.mean")
def test_several_values():
    assert mean([1, 2, 3, 6]) == 3
