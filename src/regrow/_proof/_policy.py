"""What may be repaired without an oracle, and what proves it.

An *oracle* is something the user gave that says what is right: ``verify=``, ``tests=``,
``record=`` (or pytest tests on the command line). Without one, regrow holds to this:

- An exception raised by a ``raise`` or ``assert`` statement in the user's own code is a decision
  of that code (validation, a business rule, ``NotImplementedError``), not a bug. It is never
  "repaired" — no session runs, and the ledger says why.
- A *crash* (a Python operation that raises: ``ZeroDivisionError``, ``IndexError``, ``KeyError``,
  ``TypeError``…) may be repaired, but only by an edit of the built-in engine, and only when the
  fix returns what the original returned on every input near the failing call where the original
  returned (:class:`regrow._checks._differential.Differential`, strict). When too few such inputs exist,
  regrow cannot tell a fix from a change of meaning, and says so instead of installing.

With or without an oracle, a failing call that changed its own arguments before it failed cannot
be replayed faithfully: without a snapshot of the arguments taken before the call (``verify=`` and
``record=`` take one) the session is refused with the reason.
"""

from __future__ import annotations

import dataclasses
import dis
import os
import types
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .._checks._differential import Differential, original_job
from .._checks._nearby import nearby
from .._frames import users_file
from .._sandbox import Limits, Sandbox
from .._target._environ import Keep, kept

if TYPE_CHECKING:
    from .._checks._oracles import Check
    from .._evidence._failure import Failure
    from .._target._target import Target

MIN_RETURNING = 3  # inputs near the failing call where the original returned, for a blind fix
_RAISE_OPS = frozenset(name for name in ("RAISE_VARARGS",) if name in dis.opmap)


def deliberate(exc: BaseException) -> str | None:
    """How ``exc`` was raised on purpose by the user's code (``raise``/``assert`` at file:line), else ``None``.

    The innermost frame of the traceback decides: a ``raise`` or ``assert`` statement there, in a
    file outside the standard library and installed packages, is the user's own decision. A bare
    ``raise`` that re-raises a crash keeps the crash's traceback and counts as the crash.
    """
    tb = exc.__traceback__
    if tb is None:
        return None
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    if not users_file(code.co_filename):
        return None
    for instruction in dis.get_instructions(code):
        if instruction.offset == tb.tb_lasti:
            if instruction.opname in _RAISE_OPS and instruction.arg:
                what = "assert" if isinstance(exc, AssertionError) and _is_assert(code, tb.tb_lasti) else "raise"
                return f"`{what}` at {os.path.basename(code.co_filename)}:{tb.tb_lineno}"
            return None
    return None


def _is_assert(code: types.CodeType, offset: int) -> bool:
    """Whether the raise at ``offset`` is an ``assert``'s (it loads AssertionError just before)."""
    before = [ins for ins in dis.get_instructions(code) if ins.offset < offset][-4:]
    return any(ins.opname == "LOAD_ASSERTION_ERROR" for ins in before)


def refusal_without_oracle(exc: BaseException, qualname: str) -> str | None:
    """The reason not to repair ``exc`` when the user gave no oracle, or ``None`` to go on."""
    where = deliberate(exc)
    if where is None:
        return None
    return (f"refused: {type(exc).__name__} was raised deliberately by {where} in your code; without verify=, "
            f"tests= or record= regrow does not change a decision of the code of {qualname}")


@dataclasses.dataclass(frozen=True)
class Guard:
    """What the original does around the failing call: the check a fix must pass, or why none can be proven."""

    check: Differential | None = None
    refusal: str = ""  # set: no fix can be proven for this failure, and this is why
    mutates: bool = False  # the original changes its arguments when it runs


def guard(target: Target, failure: Failure, sandbox: Sandbox, *, strict: bool, snapshot: bool,
          environ: Keep = True) -> Guard:
    """Run the original on inputs near the failing call (in the sandbox) and build the guard.

    ``strict``: no oracle, so the fix must keep every result where the original returned.
    ``snapshot``: the failing call's arguments were copied before the call, so they are the
    caller's real inputs even if the call changed them. ``environ``: the configuration the original
    keeps in the sandbox, as :class:`~regrow.Session` takes it (:func:`regrow._target._environ.kept`).
    """
    calls = [(tuple(failure.args), dict(failure.kwargs)), *nearby(target.func, tuple(failure.args), failure.kwargs)]
    limits = Limits(timeout=5.0, environ_keep=kept(target.func, environ))
    outcome = sandbox.call(original_job, target, calls, limits=limits)
    data = outcome.value if outcome.ok else None
    keys = data.get("keys") if type(data) is dict else None
    if type(keys) is not list or len(keys) != len(calls) or not all(k is None or type(k) is str for k in keys):
        why = outcome.reason() if not outcome.ok else "a malformed reply"
        if strict:
            return Guard(refusal=f"refused: the original could not be run on inputs near the failing call ({why}), so "
                                 "regrow cannot tell a fix from a change of meaning; give verify=, tests= or record=")
        return Guard()
    assert type(data) is dict
    mutates = bool(data.get("mutates")) and not snapshot
    if mutates:
        return Guard(refusal="refused: the failing call changes its arguments before it fails, so the arguments "
                             "regrow holds are not the ones you passed and no proof on them would be a proof on "
                             "your input; give verify= or record= (they copy the arguments before each call)",
                     mutates=True)
    check = Differential(calls[1:], keys[1:], strict=strict)
    if strict and check.returning < MIN_RETURNING:
        return Guard(refusal=f"refused: the original returned on only {check.returning} of {len(calls) - 1} inputs "
                             "near the failing call, too few to tell a fix from a change of meaning; give verify=, "
                             "tests= or record=")
    return Guard(check)


def untrusted_without_oracle(origin: str) -> str:
    return (f"without verify=, tests= or record= only the built-in engine's edits are installed (each keeps the "
            f"original's results near the failure); a candidate from {origin} needs an oracle")


def admit(target: Target, failure: Failure, exc: BaseException | None, checks: Sequence[Check],
          sandbox: Sandbox, *, oracle: bool, snapshot: bool, environ: Keep = True) -> tuple[list[Check], str]:
    """The checks a session for ``failure`` proves fixes with, or the reason no session may run.

    ``oracle``: the user gave ``verify=``, ``tests=`` or ``record=``; ``snapshot``: the failing
    call's arguments were copied before the call (see :func:`guard`); ``environ``: see :func:`guard`.
    """
    if not oracle and exc is not None:
        refusal = refusal_without_oracle(exc, target.qualname)
        if refusal:
            return list(checks), refusal
    if oracle and not failure.args and not failure.kwargs:
        return list(checks), ""  # a failing test, not a call: there is no call to vary
    found = guard(target, failure, sandbox, strict=not oracle, snapshot=snapshot, environ=environ)
    if found.refusal:
        return list(checks), found.refusal
    return [*checks, found.check] if found.check is not None and found.check.calls else list(checks), ""
