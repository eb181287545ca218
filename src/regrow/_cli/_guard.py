"""A heal that the code it runs cannot end: ``regrow heal`` works in a forked child, watched by its parent.

The tests of a project run in the heal's own process (that is what makes judging a candidate cheap),
so a test that calls ``os._exit(0)`` or crashes the interpreter would end ``regrow`` itself, with a
status that means something else ("0: fixed"). The parent forks the heal before anything runs, and
the child tells it, in a page of shared memory, what it is doing and the status it ends with. When
the child ends without saying so, something it ran ended it: the parent reports what it was doing,
and the status is 1 (no fix), never the child's.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import signal
import sys
import traceback
from collections.abc import Callable, Iterator

from .._redact import redact_text

NO_FIX = 1
INTERRUPTED = 130  # the shell's status for a command ended by Ctrl-C
INTERNAL = 70  # EX_SOFTWARE: regrow itself failed (a bug), said in one line
BROKEN_PIPE = 141  # the shell's status for a command ended by writing to a closed pipe (128 + SIGPIPE)
_SIZE = 4096
_DONE = b"D"  # the first byte: the child said its status (the second byte)


class Guard:
    """What the child is doing (for the parent's report if the child is ended), and its status."""

    def __init__(self) -> None:
        self._page = mmap.mmap(-1, _SIZE)  # anonymous and shared: the forked child writes, the parent reads

    def doing(self, what: str) -> None:
        """Note what the heal is doing now: named in the report if the code it runs ends the interpreter."""
        data = what.encode("utf-8", "replace")[: _SIZE - 3]
        self._page[2:] = data + b"\0" * (_SIZE - 2 - len(data))

    def done(self, status: int) -> None:
        self._page[1:2] = bytes([status & 0xFF])
        self._page[0:1] = _DONE

    def said(self) -> int | None:
        return self._page[1] if self._page[0:1] == _DONE else None

    def what(self) -> str:
        return self._page[2:].rstrip(b"\0").decode("utf-8", "replace")


_current: Guard | None = None


def doing(what: str) -> None:
    """Note what the heal is doing now (nothing when the heal is not guarded)."""
    if _current is not None:
        _current.doing(what)


def interrupted() -> str:
    """The one line for Ctrl-C before the search: what the heal was doing, and that no file was changed."""
    what = _current.what() if _current is not None else ""
    return f"regrow: interrupted{' while ' + what if what else ''}; no file was changed"


def guarded(run: Callable[[], int]) -> int:
    """``run()`` in a forked child; its status, or :data:`NO_FIX` with one line on stderr when the code it
    ran ended the child. Without ``os.fork`` (Windows), ``run()`` here."""
    global _current
    if not hasattr(os, "fork"):
        return run()
    guard = Guard()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    pid = os.fork()
    if pid == 0:  # the child: the heal
        _current = guard
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, _interrupted)
        me = os.getpid()
        status = INTERNAL  # if what follows raises something the command did not handle: one line says what
        try:
            status = run()
        except Exception as exc:  # a fault of regrow's own: one line, not a silent exit (REGROW_DEBUG=1: traceback)
            print(f"regrow: internal error: {type(exc).__name__}: {redact_text(str(exc))[:500]} (a bug in regrow; "
                  "REGROW_DEBUG=1 shows where)", file=sys.stderr)
            if os.environ.get("REGROW_DEBUG"):
                traceback.print_exc()
        finally:
            if os.getpid() == me:  # not a process the heal forked, unwinding to here
                with contextlib.suppress(Exception):
                    sys.stdout.flush()
                    sys.stderr.flush()
                guard.done(status)
                os._exit(status)
    with _parent_signals(pid):
        status = _wait(pid)
    said = guard.said()
    if said is not None:
        return said
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGINT:
        print("regrow: interrupted; no file was changed", file=sys.stderr)
        return INTERRUPTED
    how = (f"with status {os.WEXITSTATUS(status)}" if os.WIFEXITED(status)
           else f"by signal {signal.Signals(os.WTERMSIG(status)).name}")
    what = guard.what()
    print(f"regrow: the code under test ended the interpreter {how}"
          f"{' while ' + what if what else ''}: a test that exits or crashes the process cannot prove a fix; "
          "no fix", file=sys.stderr)
    return NO_FIX


def _interrupted(signum: int, frame: object) -> None:
    """The heal's SIGINT: interrupted once. A second (``kill -INT`` of the whole group reaches the child twice: from
    the sender and passed on by the parent) must not break the clean end the first began."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise KeyboardInterrupt


def _wait(pid: int) -> int:
    """The child's status once it ends. A SIGINT sent to this process alone (``kill -INT``, ``timeout -s INT``, a
    CI runner cancelling) is passed on to the child; one from the terminal (Ctrl-C) reached it already, with its
    whole process group, and is not sent twice."""
    if not hasattr(signal, "sigtimedwait"):  # (macOS) Ctrl-C still reaches the child; a kill -INT does not
        return os.waitpid(pid, 0)[1]
    wanted = {signal.SIGINT, signal.SIGCHLD}
    before = signal.pthread_sigmask(signal.SIG_BLOCK, wanted)
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return status
            got = signal.sigtimedwait(wanted, 1.0)
            if got is not None and got.si_signo == signal.SIGINT and got.si_code == _SI_USER:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGINT)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)  # (a SIGINT left pending is ignored: see _parent_signals)


_SI_USER = 0  # a signal's si_code when kill() sent it; a terminal's Ctrl-C comes from the kernel (SI_KERNEL)


@contextlib.contextmanager
def _parent_signals(pid: int) -> Iterator[None]:
    """Ctrl-C reaches the child (same process group), which ends cleanly: the parent waits for it.
    A SIGTERM to the parent is passed on."""

    def forward(signum: int, frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signum)

    previous_int = signal.signal(signal.SIGINT, signal.SIG_IGN)
    previous_term = signal.signal(signal.SIGTERM, forward)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous_int)
        signal.signal(signal.SIGTERM, previous_term)
