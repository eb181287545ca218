"""What ``regrow heal`` shows while it searches: a live progress display on a terminal, a plain log elsewhere.

Both take the session's events (:mod:`._events`) and the heal's phases; neither prints a line per
candidate unless asked (``-v``). The plain log (not a terminal, ``--log``, or no ``rich``) writes one
line per phase and per notable event; the live display (rich) redraws one panel: the phase,
candidates judged, their rate, the best so far and the time elapsed. The summary at the end is
:mod:`._summary`'s.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, TextIO

from .._candidate import Candidate
from .._events import Event
from .._target._target import Target

# Events worth a line in the log besides the verdicts: what a model or an install did or refused.
_NOTABLE = {"proposer_error", "budget_refused", "reply_refused", "module_installed", "install_refused",
            "transient_retry", "cooldown"}


def file_line(target: Target, line: int | None) -> int | None:
    """The line in the target's file of a candidate's edit (which counts from the ``def``)."""
    return None if line is None else target.def_lineno + line - 1  # decorators above the def included


def where(target: Target, line: int | None) -> str:
    found = file_line(target, line)
    return f" at {Path(target.filename).name}:{found}" if found is not None else ""


def label(target: Target, candidate: Candidate) -> str:
    """``engine swap at shapes.py:9``: a candidate, its line the file's (not counted from the ``def``)."""
    return f"{candidate.origin}{' ' + candidate.operator if candidate.operator else ''}" + where(target, candidate.line)


class Display:
    """The plain log: a line per phase and per notable event, a line per candidate with ``verbose``."""

    def __init__(self, out: TextIO, target: Target, *, verbose: bool = False) -> None:
        self.out = out
        self.target = target
        self.verbose = verbose
        self.judged = 0
        self.passed = 0
        self.best = ""
        self.phase = ""
        self.started = time.monotonic()

    # -- what the heal tells it ------------------------------------------------------------
    def set_phase(self, phase: str) -> None:
        if phase != self.phase:
            self.phase = phase
            self.line(f"regrow: {phase}")

    def line(self, text: str) -> None:
        try:
            print(text, file=self.out, flush=True)
        except BrokenPipeError:  # the reader went away (``| head``): the heal goes on, silently
            silence(self.out)

    def close(self) -> None:
        """Stop redrawing (the live display); lines printed after this go straight to the output."""

    # -- the session's events -------------------------------------------------------------------
    def __call__(self, event: Event) -> None:
        if event.type == "attempt_start":
            self.set_phase(f"searching with {event.message or 'proposer ' + str(event.attempt)}")
        elif event.type == "progress" and event.message:  # planning a long function: the live panel's phase
            if self.verbose:
                self.set_phase(event.message)
            else:
                self.phase = event.message  # a line each only with -v: the plain output stays short
        elif event.type == "verdict" and event.verdict is not None and event.candidate is not None:
            self.judged += 1
            shown = label(self.target, event.candidate)
            if event.verdict.ok:
                self.passed += 1
                self.best = self.best or shown
            if self.verbose:
                self._candidate(shown, event.verdict.ok, f"{event.verdict.check}: {event.verdict.reason}")
        elif event.type in _NOTABLE or (self.verbose and event.type == "model_call"):  # tokens, first token, tokens/s
            self.line(f"regrow: {event.type.replace('_', ' ')}: {event.message}")

    def _candidate(self, label: str, ok: bool, reason: str) -> None:
        self.line(f"  #{self.judged:<4} {'PASS' if ok else 'FAIL'} {label}{'' if ok else '  ' + reason}")

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started


class LiveDisplay(Display):
    """A panel rich redraws in place on a terminal: phase, candidates judged, rate, best so far, elapsed."""

    def __init__(self, out: TextIO, target: Target, *, verbose: bool = False) -> None:
        super().__init__(out, target, verbose=verbose)
        from rich.console import Console
        from rich.live import Live

        self.console = Console(file=out, highlight=False)
        self._live: Any = Live(self._panel(), console=self.console, refresh_per_second=8, transient=True,
                               get_renderable=self._panel, redirect_stdout=False, redirect_stderr=False)
        self._live.start()

    def _panel(self) -> Any:
        from rich.table import Table

        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="bold cyan")
        grid.add_column()
        rate = self.judged / self.elapsed if self.elapsed > 0 else 0.0
        grid.add_row("phase", self.phase or "starting")
        grid.add_row("candidates", f"{self.judged} judged, {self.passed} passed ({rate:.1f}/s)")
        grid.add_row("best so far", self.best or "none yet")
        grid.add_row("elapsed", f"{self.elapsed:.1f}s")
        return grid

    def set_phase(self, phase: str) -> None:
        self.phase = phase
        if self._live.is_started:
            self._live.refresh()
        else:
            super().set_phase(phase)

    def line(self, text: str) -> None:
        if self._live.is_started:
            self.console.print(text, markup=False, highlight=False)
        else:
            super().line(text)

    def _candidate(self, label: str, ok: bool, reason: str) -> None:
        mark = "[green]PASS[/]" if ok else "[red]FAIL[/]"
        detail = "" if ok else f"  [dim]{_escape(reason)}[/]"
        self.console.print(f"  #{self.judged:<4} {mark} {_escape(label)}{detail}", highlight=False)

    def close(self) -> None:
        if self._live.is_started:
            self._live.stop()


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def silence(out: TextIO) -> None:
    """After a broken pipe, point ``out`` at /dev/null so later prints and the interpreter's last flush
    cannot fail (a stream without a descriptor is left as it is)."""
    try:
        fileno = out.fileno()
    except (AttributeError, OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fileno)
    os.close(devnull)


def make_display(out: TextIO, target: Target, *, verbose: bool = False, log: bool = False) -> Display:
    """The live display on a terminal (with rich installed), else the plain log."""
    if not log and _is_terminal(out) and os.environ.get("TERM") != "dumb":
        try:
            return LiveDisplay(out, target, verbose=verbose)
        except ImportError:
            pass
    return Display(out, target, verbose=verbose)


def _is_terminal(out: TextIO) -> bool:
    try:
        return out.isatty()
    except (AttributeError, ValueError):
        return False
