"""Judging a fix against the reference: differential testing on a real set of inputs.

The inputs are the calls recorded while the tests ran on the buggy version, and inputs made from
them in the worker (:func:`regrow._checks._inputs.widen`: landmark and negated numbers, empty,
singleton, longer, reversed and sorted containers, empty, doubled and re-cased strings, ``None``
where a parameter is optional; dates, durations, exact numbers and objects' number fields at other
magnitudes; two arguments swapped, given each other's value, or changed at once: :mod:`._widen`).
Where that makes few, the inputs made are widened once more. On each, the reference runs twice and
the fix (installed in the live function, so its recursive calls are the fix's too) runs beside it.
A call counts when the reference returned, or raised, the same way both times: raising is compared
by exception type; a call where the reference timed out, or changed its mind, is left out. Where the
fix differs, the reference runs a third time, after the fix: a difference counts only if the
reference still says what it said first (boltons' ``GUIDerator`` salts its ids with the clock when
its process is not the one that made it: the reference's two runs agreed within a clock tick and the
fix's, a tick later, "differed", and the reference's own fix was judged wrong).

Before those, where the worker has the ``"live"`` job (:mod:`._live`), the fix is compared with the
reference on the calls the tests make while they run, receivers and their state after the call
included, and for a method on its receivers crossed with its arguments: what recorded calls cannot
carry (an object that cannot be pickled) is judged there. Both judgements count.

The verdict: ``wrong`` when the fix differs from the reference on any counted call of either (with
that call as the counterexample); ``unjudged`` when fewer than ``min_calls`` calls counted in each
— a fix that agrees on one call proves nothing — with the reason; ``correct`` otherwise.

Calls go to the worker in chunks, each with a time budget. A chunk whose worker dies (a hang in C
that no signal interrupts, a crash, an action the guard refuses) is tried again one call at a time;
a call that kills the worker alone is put to the reference alone, and where the reference behaves,
the fix's death is the difference.
"""

from __future__ import annotations

import collections
import dataclasses
import re
import time
import types
from collections.abc import Callable, Sequence
from typing import Any

from ..._checks._inputs import SealedCall, observe, open_all, sealed_list, widen_job
from ..._proposers._engine._rank import installed
from ..._sandbox._warm import Worker
from ..._target._target import Target
from ._live import read_live

DEFAULT_MIN_CALLS = 10  # calls a judgement needs, unless the manifest or the command line says otherwise
_GENERATED = 400  # inputs made from the tests' calls, at most
_ENOUGH = 3  # fewer inputs than this many times the calls a judgement needs: the inputs made are widened too
_CHUNK = 50  # calls per worker job
_CHUNK_SECONDS = 5.0  # time budget of one job; what it has not reached goes in the next
_ROW_SECONDS = 3.0  # the longest one call's row may take (two reference runs, the fix, a retry)
_CALL_LIMIT = 0.25  # seconds one run of one call may take
_RETRY_LIMIT = 1.0  # seconds the fix gets again where it timed out and the reference did not
_TIMEOUT = "timeout"
_APART = re.compile(r"\b_regrow_apart_\d+_")  # see regrow._target._locate.import_apart
_LIVE_SHARE = 0.5  # of the budget, for comparing while the tests run (the run itself may take a little more)
_LIVE_GRACE = 0.25  # more of it, for the tests to finish once the comparing stopped

Row = list[str]  # [reference, reference again, fix, fix again] ("" where not run)


def jobs(target: Target, reference: types.FunctionType) -> dict[str, Callable[..., Any]]:
    """The worker jobs a judgement needs: ``widen``, ``judge`` and ``reference-alone``."""

    def judge(fix: str, plain: Any, budget: float) -> list[Row]:
        calls = open_all(plain)
        stop = time.monotonic() + float(budget)
        rows: list[Row] = []
        with installed(target, fix) as fn:
            for call in calls:
                if rows and time.monotonic() >= stop:
                    break
                first = observe(reference, call, _CALL_LIMIT)
                again = observe(reference, call, _CALL_LIMIT) if first != _TIMEOUT else first
                if first == _TIMEOUT or first != again:
                    rows.append([first, again, "", ""])
                    continue
                mine = observe(fn, call, _CALL_LIMIT)
                if mine == _TIMEOUT:
                    mine = observe(fn, call, _RETRY_LIMIT)
                mine_again = observe(fn, call, _CALL_LIMIT) if mine == first else mine
                if mine_again != first:  # a difference counts if the reference still says what it said
                    again = observe(reference, call, _CALL_LIMIT)  # (one that reads the clock may not)
                rows.append([first, again, mine, mine_again])
        return rows

    def alone(plain: Any) -> list[Row]:
        return [[observe(reference, call, _CALL_LIMIT), observe(reference, call, _CALL_LIMIT), "", ""]
                for call in open_all(plain)]

    return {"widen": widen_job(target.func), "judge": judge, "reference-alone": alone}


@dataclasses.dataclass
class _Tally:
    agree: int = 0
    timeout: int = 0  # the reference timed out: left out
    inconsistent: int = 0  # the reference behaved differently on two runs of the same call: left out
    wrong: list[tuple[str, str, str]] = dataclasses.field(default_factory=list)  # (call shown, reference, fix)

    def add(self, shown: str, row: Row) -> None:
        # A reference imported apart names its module's classes under a private package name.
        first, again, mine, mine_again = (_APART.sub("", text) for text in row)
        if first == _TIMEOUT:
            self.timeout += 1
        elif first != again:
            self.inconsistent += 1
        elif mine != first or mine_again != first:
            self.wrong.append((shown, first, mine if mine != first else mine_again))
        else:
            self.agree += 1

    @property
    def compared(self) -> int:
        return self.agree + len(self.wrong)


def judge(worker: Worker, fix: str, given: Sequence[SealedCall], min_calls: int, budget: float) -> dict[str, Any]:
    """The verdict on ``fix``: ``status`` (correct, wrong or unjudged), ``correct``, ``judged_calls``,
    ``agreement``, the inputs used and left out, and a ``counterexample`` when wrong."""
    deadline = time.monotonic() + budget
    live, live_inputs = _live(worker, fix, budget) if "live" in worker.jobs else (None, {})
    status, made = worker.call("widen", [call.to_plain() for call in given], _GENERATED,
                               timeout=max(0.5, min(10.0, (deadline - time.monotonic()) / 3)), read=sealed_list)
    generated: list[SealedCall] = made if status == "ok" else []
    if generated and len(given) + len(generated) < _ENOUGH * min_calls:  # few: the inputs made, widened again
        status, again = worker.call("widen", [call.to_plain() for call in generated[:_CHUNK]], _GENERATED,
                                    timeout=max(0.5, min(10.0, (deadline - time.monotonic()) / 3)), read=sealed_list)
        known = {call.key for call in [*given, *generated]}
        generated += [call for call in again if call.key not in known][:_GENERATED] if status == "ok" else []
    calls = [*given, *generated]
    tally = _Tally()
    rows, not_run = _run(worker, fix, calls, deadline)
    for call, row in rows:
        tally.add(call.shown, row)
    best = max([tally, *([live] if live else [])], key=lambda t: t.compared)
    verdict: dict[str, Any] = {
        "judged_calls": best.compared, "agreement": f"{best.agree}/{best.compared}",
        "inputs": {"given": len(given), "generated": len(generated), "reference_timeout": tally.timeout,
                   "reference_inconsistent": tally.inconsistent, "not_run": not_run, **live_inputs},
    }
    wrong = [*tally.wrong, *(live.wrong if live else [])]
    if wrong:
        shown, expected, got = wrong[0]
        return {**verdict, "status": "wrong", "correct": False,
                "counterexample": f"f({shown}): reference {expected[:200]}, fix {got[:200]}"}
    if best.compared < min_calls:
        return {**verdict, "status": "unjudged", "correct": None,
                "reason": _unjudged(best.compared, min_calls, live_inputs)}
    return {**verdict, "status": "correct", "correct": True}


def _live(worker: Worker, fix: str, budget: float) -> tuple[_Tally | None, dict[str, Any]]:
    """The tally of the ``"live"`` job (``None`` if it did not finish) and what it says of its inputs."""
    status, value = worker.call("live", fix, _LIVE_SHARE * budget, timeout=(_LIVE_SHARE + _LIVE_GRACE) * budget,
                                read=read_live)
    if status != "ok":
        return None, {"live": f"{status}: {value}" if value else status}
    tally = _Tally()
    for shown, *row in value["rows"]:
        tally.add(shown, row)
    seen = {"calls_seen": value["seen"], "in_tests": value["in_tests"], "crossed": value["crossed"],
            "built": value["built"], "uncopyable": value["uncopyable"], "reference_timeout": tally.timeout,
            "reference_inconsistent": tally.inconsistent, "tests": value["tests"][:300]}
    return tally, {"live": seen}


def _unjudged(compared: int, min_calls: int, live: dict[str, Any]) -> str:
    """Why a fix is unjudged: how many calls could be compared, and what the live judgement saw."""
    reason = (f"compared on {compared} call(s) where the reference behaved consistently, "
              f"fewer than the {min_calls} a judgement needs")
    seen = live.get("live")
    if isinstance(seen, str):
        return f"{reason}; the judgement while the tests ran did not finish ({seen})"
    if isinstance(seen, dict):
        if not seen["calls_seen"]:
            return f"{reason}; the tests never called the target on the main thread while the fix was judged"
        left = [f"{seen[key]} {text}" for key, text in (
            ("uncopyable", "whose inputs could not be copied"), ("reference_inconsistent", "where the reference "
             "changed its mind between two runs"), ("reference_timeout", "where the reference timed out")) if seen[key]]
        return f"{reason}; of the calls made while the tests ran, left out: {', '.join(left) or 'none'}"
    return reason


def _run(worker: Worker, fix: str, calls: Sequence[SealedCall],
         deadline: float) -> tuple[list[tuple[SealedCall, Row]], int]:
    """Every call's row, as far as the time allows, and how many calls the time did not reach."""
    pending = collections.deque(calls)
    singles: collections.deque[SealedCall] = collections.deque()  # calls of a chunk that killed the worker
    rows: list[tuple[SealedCall, Row]] = []
    while (pending or singles) and (left := deadline - time.monotonic()) > 0:
        single = bool(singles)
        batch = [singles.popleft()] if single else [pending.popleft() for _ in range(min(_CHUNK, len(pending)))]
        seconds = min(left, _CHUNK_SECONDS)
        status, value = worker.call("judge", fix, [call.to_plain() for call in batch], seconds,
                                    timeout=seconds + _ROW_SECONDS, read=_rows(len(batch)))
        if status == "ok":
            rows.extend(zip(batch[: len(value)], value, strict=True))
            pending.extendleft(reversed(batch[len(value):]))  # the budget ran out before these
        elif not single:
            singles.extend(batch)
        else:
            rows.append((batch[0], _alone(worker, batch[0], status)))
    return rows, len(pending) + len(singles)


def _alone(worker: Worker, call: SealedCall, died: str) -> Row:
    """The row of a call that killed the worker: the reference's own behaviour against the fix's death."""
    status, row = worker.call("reference-alone", [call.to_plain()], timeout=2 * _CALL_LIMIT + _ROW_SECONDS,
                              read=_rows(1))
    if status != "ok":  # the reference kills it too: nothing to compare
        return [_TIMEOUT, _TIMEOUT, "", ""]
    first, again = row[0][:2]
    return [first, again, f"ended the worker ({died})", f"ended the worker ({died})"]


def _rows(count: int) -> Callable[[Any], list[Row]]:
    """A reader for a ``judge`` reply: 1 to ``count`` rows of four strings (``ValueError`` otherwise)."""

    def read(data: Any) -> list[Row]:
        if type(data) is not list or not 1 <= len(data) <= count:
            raise ValueError(f"expected 1 to {count} rows")
        for row in data:
            if type(row) is not list or len(row) != 4 or not all(type(item) is str for item in row):
                raise ValueError("a row is a list of four strings")
        return data

    return read
