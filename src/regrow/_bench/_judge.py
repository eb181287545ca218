"""Judging a fix against the reference: differential testing on a real set of inputs.

The inputs are the calls recorded while the tests ran on the buggy version, and inputs made from
them in the worker (:func:`regrow._engine._inputs.widen`: landmark and negated numbers, empty,
singleton, longer, reversed and sorted containers, empty, doubled and re-cased strings, ``None``
where a parameter is optional). On each, the reference runs twice and the fix (installed in the
live function, so its recursive calls are the fix's too) runs beside it. A call counts when the
reference returned, or raised, the same way both times: raising is compared by exception type; a
call where the reference timed out, or changed its mind, is left out.

The verdict: ``wrong`` when the fix differs from the reference on any counted call (with that call
as the counterexample); ``unjudged`` when fewer than ``min_calls`` calls counted — a fix that
agrees on one call proves nothing; ``correct`` otherwise.

Calls go to the worker in chunks, each with a time budget. A chunk whose worker dies (a hang in C
that no signal interrupts, a crash, an action the guard refuses) is tried again one call at a time;
a call that kills the worker alone is put to the reference alone, and where the reference behaves,
the fix's death is the difference.
"""

from __future__ import annotations

import collections
import dataclasses
import time
import types
from collections.abc import Callable, Sequence
from typing import Any

from .._engine._inputs import SealedCall, observe, open_all, sealed_list, widen_job
from .._engine._rank import installed
from .._engine._worker import Worker
from .._target import Target

DEFAULT_MIN_CALLS = 10  # calls a judgement needs, unless the manifest or the command line says otherwise
_GENERATED = 400  # inputs made from the tests' calls, at most
_CHUNK = 50  # calls per worker job
_CHUNK_SECONDS = 5.0  # time budget of one job; what it has not reached goes in the next
_ROW_SECONDS = 3.0  # the longest one call's row may take (two reference runs, the fix, a retry)
_CALL_LIMIT = 0.25  # seconds one run of one call may take
_RETRY_LIMIT = 1.0  # seconds the fix gets again where it timed out and the reference did not
_TIMEOUT = "timeout"

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
                rows.append([first, again, mine, observe(fn, call, _CALL_LIMIT) if mine == first else mine])
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
    wrong: list[tuple[SealedCall, str, str]] = dataclasses.field(default_factory=list)

    def add(self, call: SealedCall, row: Row) -> None:
        first, again, mine, mine_again = row
        if first == _TIMEOUT:
            self.timeout += 1
        elif first != again:
            self.inconsistent += 1
        elif mine != first or mine_again != first:
            self.wrong.append((call, first, mine if mine != first else mine_again))
        else:
            self.agree += 1


def judge(worker: Worker, fix: str, given: Sequence[SealedCall], min_calls: int, budget: float) -> dict[str, Any]:
    """The verdict on ``fix``: ``status`` (correct, wrong or unjudged), ``correct``, ``judged_calls``,
    ``agreement``, the inputs used and left out, and a ``counterexample`` when wrong."""
    deadline = time.monotonic() + budget
    status, made = worker.call("widen", [call.to_plain() for call in given], _GENERATED,
                               timeout=min(10.0, budget / 3), read=sealed_list)
    generated: list[SealedCall] = made if status == "ok" else []
    calls = [*given, *generated]
    tally = _Tally()
    rows, not_run = _run(worker, fix, calls, deadline)
    for call, row in rows:
        tally.add(call, row)
    compared = tally.agree + len(tally.wrong)
    verdict: dict[str, Any] = {
        "judged_calls": compared, "agreement": f"{tally.agree}/{compared}",
        "inputs": {"given": len(given), "generated": len(generated), "reference_timeout": tally.timeout,
                   "reference_inconsistent": tally.inconsistent, "not_run": not_run},
    }
    if tally.wrong:
        call, expected, got = tally.wrong[0]
        return {**verdict, "status": "wrong", "correct": False,
                "counterexample": f"f({call.shown}): reference {expected[:200]}, fix {got[:200]}"}
    if compared < min_calls:
        return {**verdict, "status": "unjudged", "correct": None,
                "reason": f"compared on {compared} call(s) where the reference behaved consistently, "
                             f"fewer than the {min_calls} a judgement needs"}
    return {**verdict, "status": "correct", "correct": True}


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
