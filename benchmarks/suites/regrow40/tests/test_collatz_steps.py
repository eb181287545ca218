import pytest

from programs.collatz_steps import collatz_steps


def test_one():
    assert collatz_steps(1) == 0


def test_even_only():
    assert collatz_steps(2) == 1
    assert collatz_steps(16) == 4


def test_small():
    assert collatz_steps(3) == 7
    assert collatz_steps(6) == 8
    assert collatz_steps(7) == 16


def test_long():
    assert collatz_steps(27) == 111


def test_bad_input():
    with pytest.raises(ValueError):
        collatz_steps(0)
