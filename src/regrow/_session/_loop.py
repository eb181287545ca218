"""The repair loop: ask proposers for candidates, judge each in a sandbox, stop at the first proof.

One implementation serves sync and async front-ends (async ones run it on a worker thread).
"""

from __future__ import annotations

import dataclasses
import logging
import time
import traceback
import types
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from .._ambiguity import Ambiguity
from .._candidate import Candidate
from .._checks._evaluate import clear_caches
from .._checks._oracles import Check
from .._checks._writes import probe
from .._errors import BudgetSpent
from .._events import Event, EventHandler, emit
from .._evidence._failure import Failure
from .._proof._prove import prove
from .._proposers._cache import cache_key
from .._proposers._proposer import Proposer, Request, stop_reason, trusts
from .._redact import redact_text
from .._result import Budget, RepairResult
from .._sandbox import InProcessSandbox, Limits, Sandbox, default_sandbox
from .._sandbox._scrub import Scrubber
from .._secrets import mask
from .._store import Store
from .._target._diff import unified_diff
from .._target._environ import Keep, kept, missing, protect, reads_of, withheld, withheld_note
from .._target._target import InstallMode, Target
from .._verdict import Attempt, Verdict

log = logging.getLogger("regrow")


_LEAST_PROBE = 0.2  # seconds the original's probe gets however little of the session's time is left


class Session:
    """One repair of one failure of one target."""

    def __init__(
        self,
        target: Target,
        failure: Failure,
        checks: Sequence[Check],
        proposers: Sequence[Proposer],
        *,
        sandbox: Sandbox | None = None,
        engine_sandbox: Sandbox | None = None,
        budget: Budget | None = None,
        on_event: Sequence[EventHandler] = (),
        rebind: Callable[[types.FunctionType], None] | None = None,
        store: Store | None = None,
        oracle: bool = True,
        views: Sequence[str] = (),
        environ: Keep = True,
    ) -> None:
        self.target = target
        self.oracle = oracle  # the user gave checks that say what is right (see regrow._proof._policy)
        self.failure = failure
        self.checks = sorted(checks, key=lambda check: check.cost)
        self.proposers = list(proposers)
        # Where candidates are proven: every candidate in ``sandbox`` (the platform's default, a guarded
        # fork, when none is given), except that the trusted ones (the engine's edits) may take a faster
        # ``engine_sandbox``; without either, the engine's edits keep the in-process fast path.
        self.sandbox = sandbox or default_sandbox()
        self.engine_sandbox = engine_sandbox or sandbox or InProcessSandbox()
        self.budget = budget or Budget()
        self.handlers = tuple(on_event)
        self.history: list[Attempt] = []
        self.ambiguity: Ambiguity | None = None  # a proposer's candidates passed but disagree (regrow._ambiguity)
        self.settling: list[str] = []  # what the later proposers, asked to settle it, made of it
        self.screened = 0
        self.screened_attempts: list[Attempt] = []  # what proposers judged themselves, for later ones
        self.refused: list[str] = []  # what the sandbox refused, one reason per candidate it refused
        self.rebind = rebind or target.rebind  # where __code__ cannot be swapped in place
        self.store = store
        # The configuration the function reads stays in its candidates' sandbox (regrow._target._environ): the
        # variables its module reads (``environ=True``), and any named; their values are masked everywhere.
        self.reads = reads_of(target.func)
        self.environ = kept(target.func, environ)
        protect(self.environ)
        self.missed: list[str] = []  # withheld variables the candidates failed for want of
        self.failing = 0  # candidates that failed so
        # Every text a candidate produced passes through this before a log, a handler, a prompt or the ledger.
        self.scrub = Scrubber.of(target.func.__globals__, getattr(failure, "secrets", ()))  # (its password= too)
        # Folders whose writes go to a throwaway view in every sandboxed call (regrow._checks._writes): these, and
        # those the original is found to write when the search starts.
        self.views = tuple(views)

    def _emit(self, type: Any, **fields: Any) -> None:
        emit(self.handlers, Event(type, self.target.qualname, **fields))

    def run(self, install: bool = True) -> RepairResult:
        """Search for a fix; with ``install`` put the first proven one into the live function."""
        started = time.monotonic()
        deadline = started + self.budget.timeout
        self._emit("session_start", message=self.failure.summary())
        log.info("repairing %s", self.failure.summary())
        result = self._search(deadline)
        if not result.ok:
            judged = len(self.history) + self.screened
            result.reason = withheld_note(result.reason, self.target.qualname, self.missed, self.failing, judged,
                                          self.reads, self.environ)
        result.duration = time.monotonic() - started
        result.screened = self.screened
        result.place = (Path(self.target.filename).name, self.target.def_lineno)
        if result.ok and result.fix is not None:
            result.diff = unified_diff(self.target, result.fix.source)
        else:
            self._emit("exhausted", message=result.reason)
            log.warning("%s", result.ledger(limit=3).removeprefix("regrow: "))  # the logger says "regrow"
        # Recorded before it is installed: a process that ends mid-repair (a background session of
        # @heal(wait=...) is a daemon thread) loses nothing that was proven.
        if self.store is not None:
            try:
                self.store.record(result, cache_key(self.target, self.failure.fingerprint, self.checks))
            except Exception as exc:  # a locked or broken store must not cost the user the fix
                log.warning("could not record the session in %s: %s", self.store, exc)
        if result.ok and result.fix is not None and install:
            result.installed = self.install(result.fix)
        return result

    def _search(self, deadline: float) -> RepairResult:
        seen: set[str] = set()
        reason = "no proposer produced a candidate"
        notes: list[str] = []
        self._tell_environ()
        # The original's run for the folders it writes: within a quarter of what is left of the session's time (as
        # the engine's localizing), not a whole candidate timeout past it: a check that hangs on the original held
        # --timeout 3 for 10 s more, and with --timeout 20 it left the search no time at all.
        left = max((deadline - time.monotonic()) / 4, _LEAST_PROBE)
        limits = self._limits()
        self.views = probe(self.target, self.checks, self.sandbox,
                           dataclasses.replace(limits, timeout=min(limits.timeout, left)))
        for number, proposer in enumerate(self.proposers, start=1):
            self._emit("attempt_start", attempt=number, message=proposer.name)
            request = Request(self.target, self.failure, self.history, self.checks, number, deadline,
                              self.budget.max_candidates, self.budget.max_attempts, (self._relay,),
                              self.screened_attempts, listening=bool(self.handlers), jobs=self.budget.jobs,
                              views=self.views, environ=self.environ, oracle=self.oracle,
                              ambiguity=self.ambiguity,
                              screen_texts=bool(self.handlers) or number < len(self.proposers))
            proposals = _Guarded(proposer, request)
            for proposed in proposals:
                if len(self.history) >= self.budget.max_candidates:
                    return self._failed(f"candidate budget of {self.budget.max_candidates} spent")
                if time.monotonic() >= deadline:
                    return self._failed(f"time budget of {self.budget.timeout:g}s spent")
                key = proposed.source.strip()
                if key in seen:
                    continue
                seen.add(key)
                candidate = dataclasses.replace(proposed, attempt=number)
                self._emit("candidate", attempt=number, candidate=candidate)
                trusted = trusts(proposer, proposed)
                verdict = self.judge(candidate, trusted=trusted)
                self.history.append(Attempt(candidate, verdict))
                self._note(verdict)
                self._emit("verdict", attempt=number, candidate=candidate, verdict=verdict)
                if verdict.ok:
                    return RepairResult(True, self.target.qualname, self.failure, candidate, verdict, self.history,
                                        trusted=trusted)
            if proposals.error is not None:  # a broken proposer must not end the session: try the next one
                self._emit("proposer_error", attempt=number, message=f"{proposer.name}: {proposals.why}")
                reason = f"proposer {proposer.name} {proposals.verb}: {proposals.why}"
                if request.ambiguity is not None:
                    self.settling.append(reason)
            else:
                reason = "every proposer ran out of candidates"
                stopped = stop_reason(proposer)
                if isinstance(stopped, str) and stopped:
                    notes.append(f"{proposer.name}: {stopped}")
                    if request.ambiguity is not None:  # what a later proposer made of the ambiguity (a model's choice)
                        self.settling.append(notes[-1])
                ambiguity = getattr(proposer, "ambiguity", None)
                if isinstance(ambiguity, Ambiguity) and self.ambiguity is None:
                    self.ambiguity = ambiguity
        if notes and reason == "every proposer ran out of candidates":  # which budget stopped it, if one did
            reason += f" ({'; '.join(notes)})"
        judged = len(self.history) + self.screened
        if self.refused and len(self.refused) >= judged:  # what stopped them all, in one line
            reason = f"every candidate was refused by the sandbox: {self.refused[0]}"
        elif self.refused:
            reason += f"; {len(self.refused)} of {judged} were refused by the sandbox, the first: {self.refused[0]}"
        return self._failed(reason)

    def _relay(self, event: Event) -> None:
        """A proposer's own event (the engine's verdicts among them), its verdict scrubbed, to the session's
        count and the user's handlers."""
        if event.verdict is not None:
            event = dataclasses.replace(event, verdict=event.verdict.scrubbed(self.scrub))
        emit((*self.handlers, self._screen), event)

    def _screen(self, event: Event) -> None:
        """Counts the verdicts a proposer reaches on its own (the engine screens before it offers)."""
        if event.type == "verdict":
            self.screened += 1
            if event.candidate is not None and event.verdict is not None:
                self.screened_attempts.append(Attempt(event.candidate, event.verdict))
            if event.verdict is not None:
                self._note(event.verdict)

    def _note(self, verdict: Verdict) -> None:
        """Note what the sandbox refused, and the withheld variables a failing candidate lacked."""
        if verdict.check == "sandbox" and verdict.reason.startswith("refused"):
            self.refused.append(verdict.reason.removeprefix("refused").lstrip(": ")[:300])
        if not verdict.ok and "KeyError" in verdict.reason:
            lacked = withheld(missing(verdict.reason), self.environ)
            if lacked:
                self.missed.extend(name for name in lacked if name not in self.missed)
                self.failing += 1

    def _tell_environ(self) -> None:
        """Say (by name only) which configuration the candidates keep, and which reads regrow cannot name."""
        if self.environ:
            log.info("candidates of %s keep %s (masked in every output)", self.target.qualname, ", ".join(self.environ))
        if self.reads.computed:
            log.info("%s reads the environment through a name regrow cannot tell (%s): variables named like secrets "
                     "are withheld from its candidates unless named with environ=", self.target.qualname,
                     self.reads.computed[0])

    def _failed(self, reason: str) -> RepairResult:
        if self.ambiguity is not None:
            reason = "; ".join([self.ambiguity.summary(), *self.settling, "nothing installed"])
        return RepairResult(False, self.target.qualname, self.failure, history=self.history, reason=reason,
                            ambiguous=self.ambiguity)

    def judge(self, candidate: Candidate, trusted: bool = False) -> Verdict:
        """Prove ``candidate`` (see :func:`regrow._proof._prove.prove`): rails, sandbox, the host's confirmation."""
        live = self.target.func
        saved = (live.__code__, live.__defaults__, live.__kwdefaults__)
        limits = self._limits()
        try:
            sandbox = self.engine_sandbox if trusted else self.sandbox
            verdict = prove(self.target, candidate, self.checks, sandbox, limits, trusted=trusted, oracle=self.oracle)
            return verdict.scrubbed(self.scrub)
        finally:
            # An interrupted in-process evaluation may not have put the original code back.
            live.__code__, live.__defaults__, live.__kwdefaults__ = saved

    def _limits(self) -> Limits:
        return Limits(timeout=self.budget.candidate_timeout, views=self.views, environ_keep=self.environ)

    def install(self, fix: Candidate) -> InstallMode:
        fn = self.target.placed(self.target.compile(fix.source), fix.source)  # in the user's file, at its lines
        mode = self.target.install(fn)
        clear_caches(self.target)  # cached results of the old code must not outlive it
        if mode == "rebind":
            self.rebind(fn)
        self._emit("installed", candidate=fix, message=mode)
        log.info("installed a fix for %s (%s)", self.target.qualname,
                 fix.describe((Path(self.target.filename).name, self.target.def_lineno)))
        return mode


class _Guarded:
    """Iterates a proposer's candidates; a proposer that raises ends its own stream, not the session.

    Only the proposer's code is guarded: a fault while judging a candidate (in the sandbox, in the
    checks) is regrow's own and propagates.
    """

    def __init__(self, proposer: Proposer, request: Request) -> None:
        self.name = proposer.name
        self.error: Exception | None = None
        self.why, self.verb = "", "failed"  # the error's text (masked), and whether it failed or stopped
        try:
            self._it: Iterator[Candidate] | None = iter(proposer.propose(request))
        except Exception as exc:
            self._fail(exc)

    def _fail(self, exc: Exception) -> None:
        # Its text with every known secret masked (an SDK's error may quote the key it sent); a spent budget is a
        # stop, not a failure. Its traceback (masked too) only at DEBUG.
        self.why = redact_text(mask(str(exc) or type(exc).__name__))
        self.verb = "stopped" if isinstance(exc, BudgetSpent) else "failed"
        log.log(logging.INFO if self.verb == "stopped" else logging.WARNING, "proposer %s %s: %s", self.name,
                self.verb, self.why)
        if log.isEnabledFor(logging.DEBUG):
            log.debug("proposer %s: where it failed:\n%s", self.name,
                      redact_text(mask("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))))
        self.error, self._it = exc, None

    def __iter__(self) -> Iterator[Candidate]:
        return self

    def __next__(self) -> Candidate:
        if self._it is None:
            raise StopIteration
        try:
            return next(self._it)
        except StopIteration:
            self._it = None
            raise
        except Exception as exc:
            self._fail(exc)
            raise StopIteration from None
