"""Failure capture: the user's frame, redacted evidence, a stable fingerprint."""

from __future__ import annotations

from regrow._evidence._failure import capture_exception, normalise_message


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


def test_one_bug_is_one_failure_whatever_the_bad_input(make_module):
    """Issue 21: 100 distinct bad inputs of one bug have one fingerprint (the cooldown, budgets and dedup key)."""
    mod = make_module('''
        import uuid

        def parse(text, user):
            if text.startswith("id:"):
                raise LookupError(f"no record {uuid.UUID(int=len(text))} for /srv/data/{user}/rows.csv")
            if text.startswith("@"):
                raise ValueError(f"unknown handle {text}")
            return int(text)
    ''')
    words = ["abc", "two", "x" * 40, "1.5.0", "€12", "none", "NaN?", "0x1f", "ab cd", "'quoted'"]
    inputs = [f"{word}{i}" if i >= len(words) else word for i, word in enumerate(words * 10)]
    assert len(set(inputs)) == 100
    prints = {_fail(mod.parse, text, f"user{i}").fingerprint for i, text in enumerate(inputs)}
    assert len(prints) == 1
    handles = {_fail(mod.parse, f"@{name}", "u").fingerprint for name in ("ada", "bob", "carol-99", "d.e")}
    records = {_fail(mod.parse, "id:" + "x" * n, f"user-{n}").fingerprint for n in range(5)}
    assert len(handles) == 1 and len(records) == 1
    assert len(prints | handles | records) == 3  # three bugs (three lines), three failures


def test_normalise_message_names_the_bug_not_the_input():
    assert normalise_message("could not convert string to float: 'abc'") == "could not convert string to float: S"
    assert normalise_message("user 3f2a9c1e-1111-2222-3333-444455556666 at /srv/app/data.csv") == "user UUID at PATH"
    assert normalise_message("digest deadbeef12 for bad input abc", ("abc",)) == "digest HEX for bad input V"
    assert normalise_message("unable to parse", ("abl",)) == "unable to parse"  # a whole word only
