"""Issue 8: proofs on the caller's real inputs, verdicts from plain data, and the rails in the path."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum

import pytest

import regrow
from regrow._checks._transcript import Recorder, Replayer, Unjudged
from regrow._plain import Opaque, PlainError, decode, encode
from regrow._proof._rails import new_reasons

# -- a failing call that changes its arguments before it fails ---------------------------------


def test_without_a_snapshot_a_call_that_changed_its_arguments_is_refused(make_module):
    mod = make_module('''
        import regrow

        def test_five(fn):
            assert fn([], "#5") == 5

        @regrow.heal(tests=[test_five])
        def note(rows: list, text: str) -> int:
            rows.append(text)
            return int(text[2:])  # bug: one character too many
    ''')
    rows: list[str] = []
    with pytest.raises(ValueError) as info:
        mod.note(rows, "#5")
    assert "changes its arguments before it fails" in regrow.ledger_of(info.value)
    assert rows == ["#5"]  # the caller's call happened once; no retry ran on it
    assert regrow.state(mod.note).last_result.history == []  # no candidate was ever "proven" on mutated input


def test_with_verify_the_proof_and_the_retry_use_the_arguments_as_passed(make_module):
    mod = make_module('''
        import regrow

        @regrow.heal(verify=lambda n: n == 5)
        def note(rows: list, text: str) -> int:
            rows.append(text)
            return int(text[2:])  # bug: one character too many
    ''')
    rows: list[str] = []
    assert mod.note(rows, "#5") == 5
    assert rows == ["#5"]  # put back before the proof, changed once by the fixed call
    assert "text[1:]" in regrow.state(mod.note).last_result.fix.source


def test_an_argument_that_cannot_be_put_back_is_a_refusal_with_the_reason(make_module):
    mod = make_module('''
        import regrow

        class Tally:
            def __init__(self):
                self.seen = 0

        @regrow.heal(verify=lambda n: n == 5)
        def count(tally: Tally, text: str) -> int:
            tally.seen += 1
            return int(text[2:])
    ''')
    tally = mod.Tally()
    with pytest.raises(ValueError) as info:
        mod.count(tally, "#5")
    assert "cannot put them back" in regrow.ledger_of(info.value)
    assert tally.seen == 1


def test_repair_runs_every_proof_on_copies_and_the_call_once_on_yours(make_module):
    mod = make_module('''
        def note(rows: list, text: str) -> int:
            rows.append(text)
            return int(text[2:])
    ''')
    rows: list[str] = []
    result = regrow.repair(mod.note, (rows, "#5"), verify=lambda n: n == 5)
    assert result.ok and result.value == 5
    assert rows == ["#5"]


# -- results as plain data ------------------------------------------------------------------------


class Colour(enum.Enum):
    RED = 1


@dataclasses.dataclass(frozen=True)
class Point:
    x: int
    y: list[int]


def test_plain_values_come_back_as_the_hosts_own_types():
    values = [None, True, 3, 2.5, float("nan"), 1j, "t", b"b", bytearray(b"a"), [1, (2, 3)], {"k": {1, 2}},
              frozenset({"a"}), decimal.Decimal("1.10"), datetime.date(2024, 1, 31), datetime.timedelta(seconds=90),
              Colour.RED, Point(1, [2]), ValueError("bad", 3)]
    for value in values:
        back = decode(encode(value), globals())
        assert type(back) is type(value)
        assert repr(back) == repr(value)


def test_a_float_subclass_that_equals_everything_comes_back_opaque():
    class Sneaky(float):
        def __eq__(self, other):
            return True

        __hash__ = float.__hash__

    back = decode(encode(Sneaky(1.0)))
    assert isinstance(back, Opaque) and back != 12.99 and back != back.__class__("x", "y")


def test_malformed_records_are_refused():
    for bad in ("x", [], ["I", 3], ["L", "no"], ["D", [["S"]]], ["?", 1], ["B", "yes"]):
        with pytest.raises(PlainError):
            decode(bad)


def test_a_replayed_call_answers_from_the_record_and_refuses_other_arguments():
    recorder = Recorder(sum)
    assert recorder([1, 2]) == 3
    replayer = Replayer(recorder.calls, {}, is_async=False)
    assert replayer([1, 2]) == 3
    with pytest.raises(Unjudged):
        Replayer(recorder.calls, {}, is_async=False)([9])
    with pytest.raises(Unjudged):
        replayer([1, 2])  # called more often than in the sandbox


def test_a_replayed_call_repeats_the_changes_to_its_arguments():
    def grow(rows):
        rows.append(1)
        return len(rows)

    recorder = Recorder(grow)
    recorder([0])
    mine = [0]
    assert Replayer(recorder.calls, {}, is_async=False)(mine) == 2
    assert mine == [0, 1]


# -- the rails judge what a candidate adds ------------------------------------------------------


def test_the_rails_flag_what_the_candidate_adds_not_what_the_original_had():
    original = "def f(path):\n    return open(path).read()\n"
    assert new_reasons(original, "def f(path):\n    return open(path).read().strip()\n") == []
    added = new_reasons("def f(x):\n    return x\n", "def f(x):\n    import sys\n    return sys._getframe(1)\n")
    assert any("import of sys" in reason for reason in added)
    assert any("_getframe" in reason for reason in added)


def test_the_rails_see_modules_of_the_target_module_and_install_time_code():
    known = {"o": "os"}
    assert new_reasons("def f(x):\n    return x\n", "def f(x):\n    return o.system(x)\n", known)
    default = new_reasons("def f(x=1):\n    return x\n", "def f(x=print('hi')):\n    return x\n")
    assert default and "default value" in default[0]


def test_a_model_reply_using_eval_is_refused_before_it_runs(make_module):
    mod = make_module('''
        import regrow
        from scripted import Scripted

        EVAL = "def size(rows: list) -> int:\\n    return eval('len(rows)')\\n"

        @regrow.heal(proposers=[Scripted(EVAL)], verify=lambda n: n == 2, sandbox="inprocess")
        def size(rows: list) -> int:
            return len(rows) + None
    ''')
    with pytest.raises(TypeError):
        mod.size([1, 2])
    verdict = regrow.state(mod.size).last_result.history[0].verdict
    assert verdict.check == "rails" and "eval" in verdict.reason
