"""Failure capture: the user's frame, redacted evidence, a stable fingerprint."""

from __future__ import annotations

from regrow._failure import capture_exception, normalise_message


def _fail(fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except Exception as exc:
        return capture_exception(exc, fn, args, kwargs)
    raise AssertionError("expected a failure")


def test_locals_come_from_the_failing_frame(make_module):
    mod = make_module('''
        def helper(v):
            return int(v)

        def total(items, api_key):
            running = 0
            for item in items:
                running += helper(item)
            return running
    ''')
    failure = _fail(mod.total, ["1", "x"], api_key="sk-abcdefghijklmnopqrstuvwxyz")
    assert failure.exc_type == "ValueError"
    assert failure.locals["running"] == "1" and failure.locals["item"] == "'x'"
    assert failure.line == "running += helper(item)"
    assert failure.lineno == 8
    assert failure.arguments["api_key"] == "[REDACTED]"
    assert "sk-abc" not in repr(failure)
    assert "total" in failure.traceback and "helper" in failure.traceback
    assert "regrow" not in failure.traceback.split("Traceback")[0]


def test_secret_values_are_redacted_by_shape_in_any_argument(make_module):
    mod = make_module('''
        def send(headers, note):
            raise RuntimeError("failed with " + headers["Authorization"])
    ''')
    failure = _fail(mod.send, {"Authorization": "Bearer abcdefghijklmnop1234", "author": "ann"},
                    "token ghp_abcdefghijklmnopqrstuvwxyz0123")
    text = repr(failure)
    assert "abcdefghijklmnop1234" not in text and "ghp_abc" not in text
    assert "'author': 'ann'" in failure.arguments["headers"]  # not over-redacted


def test_reprs_that_raise_or_are_huge_are_guarded(make_module):
    mod = make_module('''
        import time

        class Bad:
            def __repr__(self):
                raise RuntimeError("no repr")

        class Slow:
            def __repr__(self):
                while True:
                    time.sleep(0.01)

        def f(bad, big, slow):
            raise ValueError("x")
    ''')
    failure = _fail(mod.f, mod.Bad(), "y" * 100_000, [mod.Slow()])
    assert "repr raised RuntimeError" in failure.arguments["bad"]
    assert "repr timed out" in failure.arguments["slow"]
    assert len(failure.arguments["big"]) <= 400


def test_fingerprint_is_stable_across_inputs_and_addresses(make_module):
    mod = make_module('''
        def pick(items, i):
            return items[i] / 0
    ''')
    first = _fail(mod.pick, [1, 2, 3], 1)
    second = _fail(mod.pick, [5, 6], 0)
    assert first.fingerprint == second.fingerprint
    assert len(first.fingerprint) == 16


def test_normalise_message():
    assert normalise_message("object at 0x7f00ab has 12 items, -3.5 left") == "object at 0x? has N items, N left"
