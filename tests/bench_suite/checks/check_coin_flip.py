import itertools

from programs.coin_flip import coin_flip

_calls = itertools.count()


def test_flaky():
    # Fails on every other run, whatever the code: the harness must call this flaky, not fix it.
    assert coin_flip() == 1 and next(_calls) % 2 == 1
