"""How one candidate is proven: rails first, then the sandbox, then the host's own judgement.

1. The AST rails (:mod:`regrow._proof._rails`) refuse what a candidate adds that reaches outside the
   function — ``eval``, frames, the heap, the file system, processes — before anything of it runs,
   in any sandbox mode. For a candidate not from the engine, the capability check
   (:mod:`regrow._proof._capabilities`) then refuses whatever it adds beyond the original's own vocabulary
   and a pure one: nothing it may use differs between the sandbox and your process.
2. The sandbox runs the checks on the candidate and records its results as plain data.
3. The host runs the same checks again on that record (:mod:`regrow._checks._transcript`): the verdict
   comes from code the candidate never touched. A record the host cannot settle (results that are
   not plain data, a test that calls the function by name) is accepted on the sandbox's word only
   for the built-in engine's edits, which are mutations of the user's own code.
4. A candidate from any other proposer is proven twice, the second time in a fresh process, so
   nothing the first run left behind decides.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

from .._candidate import Candidate
from .._checks._evaluate import evaluate, evaluating, reason_of
from .._checks._oracles import Check, CheckFailed
from .._checks._transcript import Replayer, Unjudged
from .._evidence._request import dropped_requests
from .._plain import PlainError
from .._sandbox import InProcessSandbox, Limits, Sandbox, clean
from .._target._target import Target
from .._verdict import Verdict
from ._capabilities import capability_reasons
from ._policy import untrusted_without_oracle
from ._rails import module_names, new_reasons


def prove(target: Target, candidate: Candidate, checks: Sequence[Check], sandbox: Sandbox, limits: Limits,
          *, trusted: bool, oracle: bool = True) -> Verdict:
    """The verdict on ``candidate``: it passes only if the host confirms what the sandbox says.

    ``trusted``: the candidate comes from regrow's own engine (or is an engine fix the cache holds),
    as the proposer declares it, never by the label a candidate carries.
    """
    if not oracle and not trusted:
        return Verdict(False, "policy", untrusted_without_oracle(candidate.origin))
    # In process nothing but the rails stands between a candidate and your program: the strict rails
    # (imports from a small allowlist, no computed attribute names) for all but the engine's edits.
    strict = isinstance(sandbox, InProcessSandbox) and not trusted
    reasons = new_reasons(target.bare_source, candidate.source, module_names(target.func.__globals__), strict)
    dropped = dropped_requests(target.bare_source, candidate.source)
    reasons += [dropped] if dropped else []
    if reasons:
        return Verdict(False, "rails", "refused before it ran: " + "; ".join(reasons[:5]))
    if not trusted:
        own = {target.func.__name__, *([target.owner.__name__] if target.owner is not None else [])}
        refused = capability_reasons(target.bare_source, candidate.source, target.func.__globals__, own)
        if refused:
            return Verdict(False, "capabilities", "refused before it ran: " + "; ".join(refused[:5]))
    verdict = _once(target, candidate, checks, sandbox, limits, trusted)
    if verdict.ok and not trusted and not isinstance(sandbox, InProcessSandbox):
        again = _once(target, candidate, checks, sandbox, limits, trusted)
        if not again.ok:
            return Verdict(False, again.check, f"failed its second proof, in a fresh process: {again.reason}",
                           verdict.duration + again.duration)
    return verdict


def _once(target: Target, candidate: Candidate, checks: Sequence[Check], sandbox: Sandbox,
          limits: Limits, trusted: bool) -> Verdict:
    outcome = sandbox.call(evaluate, target, candidate.source, list(checks), limits=limits)
    verdict = Verdict.from_outcome(outcome)
    if not verdict.ok:
        return verdict
    ok, check, reason, unjudged = rejudge(checks, outcome.value.get("transcript"), target)
    if ok:
        return verdict
    if unjudged and trusted:
        return Verdict(True, verdict.check, f"confirmed in the sandbox only: {reason}", verdict.duration,
                       verdict.passed)
    return Verdict(False, check, f"not confirmed outside the sandbox: {reason}", verdict.duration)


def _asynchronous(target: Target) -> bool:
    return bool(target.original_code.co_flags & (inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR))


def rejudge(checks: Sequence[Any], transcript: Any, target: Target) -> tuple[bool, str, str, bool]:
    """Run the replayable ``checks`` in this process on the record of a candidate's results.

    Returns ``(ok, check, reason, unjudged)``; ``unjudged`` means the record could not settle it. The
    reason is cleaned of control characters and capped (it may quote what the candidate returned).
    Every ``Exception`` a replay raises is a verdict; the record never makes the replay raise anything
    else (see :mod:`regrow._plain`), so a ``KeyboardInterrupt`` or ``SystemExit`` here is the user's own
    (Ctrl-C, a check of theirs that exits) and is let through.
    """
    ok, check, reason, unjudged = _replay_checks(checks, transcript, target)
    return ok, clean(check, 200), clean(reason), unjudged


def _replay_checks(checks: Sequence[Any], transcript: Any, target: Target) -> tuple[bool, str, str, bool]:
    if type(transcript) is not list:
        return False, "transcript", "the sandbox sent no record of the candidate's results", True
    records = {entry[0]: entry[1] for entry in transcript
               if type(entry) is list and len(entry) == 2 and type(entry[0]) is str and type(entry[1]) is list}
    for check in checks:
        if not check.replayable:
            continue
        calls = records.get(check.name)
        if calls is None:
            return False, check.name, "the sandbox sent no record of this check", False
        if not calls:
            return False, check.name, "the check did not call the function it was given", True
        replayer = Replayer(calls, target.func.__globals__, _asynchronous(target))
        try:
            with evaluating():
                check(replayer)
        except Unjudged as exc:
            return False, check.name, str(exc), True
        except PlainError as exc:
            return False, check.name, f"the sandbox sent a malformed record: {exc}", False
        except Exception as exc:
            reason = _reason(exc)
            if replayer.opaque:
                return False, check.name, f"{reason} (the result is not plain data: the host cannot compare it)", True
            return False, check.name, reason, False
    return True, "all", "", False


def _reason(exc: Exception) -> str:
    """What a failed replay says; an exception whose ``__str__`` raises is named, not let out."""
    try:
        return str(exc) if isinstance(exc, CheckFailed) else reason_of(exc)
    except Exception:
        return f"raised {type(exc).__name__} (its message could not be read)"
