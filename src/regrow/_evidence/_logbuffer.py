"""The log ring buffer: the last records of the program, so a failure's evidence holds its own.

:func:`enable_log_capture` adds one handler to the root logger (the only change it makes to the
program's logging; the levels stay as the program set them). Each record is kept with the thread
and the asyncio task that emitted it — a ``deque`` append, no lock, no formatting — so that the
records of the failing call can be told from those of concurrent calls: a failure's evidence gets
the records of its own thread and task, from the last ``window`` seconds before it, newest last,
formatted and redacted then. regrow's own records are not kept.
"""

from __future__ import annotations

import collections
import contextvars
import logging
import sys
import threading
import time

from .._redact import redact_text
from ._render import cut

PER_FAILURE = 50  # records given to one failure at most
LINE = 300  # characters of one record's line


# Set by an async front-end before it hands a failure to a worker thread (asyncio.to_thread copies
# the context): the failure's records are those of the task that failed, not of the worker.
_PINNED: contextvars.ContextVar[tuple[int, int] | None] = contextvars.ContextVar("regrow_log_scope", default=None)


def pin_scope() -> None:
    """Name the running task as the one whose records a failure captured from here on gets."""
    if _STATE.buffer is not None:
        _PINNED.set(scope())


def scope() -> tuple[int, int]:
    """Who is running: the thread, and the asyncio task in it (0 outside a task)."""
    task = _task()
    return threading.get_ident(), id(task) if task is not None else 0


def _task() -> object | None:
    """The running asyncio task, if any. asyncio is not imported for it (~30 ms at start-up, issue 26): where
    nothing imported it, no event loop can be running."""
    asyncio = sys.modules.get("asyncio")
    return asyncio.current_task() if asyncio is not None and asyncio._get_running_loop() is not None else None


class RingBuffer(logging.Handler):
    """Keeps the last ``size`` records at ``level`` and above, each with the scope that emitted it."""

    def __init__(self, size: int, level: int) -> None:
        super().__init__(level)
        self.records: collections.deque[tuple[logging.LogRecord, tuple[int, int]]] = collections.deque(maxlen=size)

    def handle(self, record: logging.LogRecord) -> bool:
        # No filters, no lock, no formatting on the way in: one append (atomic on a deque).
        if record.levelno >= self.level and not record.name.startswith("regrow"):
            task = _task()
            self.records.append((record, (threading.get_ident(), id(task) if task is not None else 0)))
        return True

    def emit(self, record: logging.LogRecord) -> None:
        self.handle(record)

    def lines_for(self, who: tuple[int, int], window: float, limit: int = PER_FAILURE) -> list[str]:
        """The records ``who`` emitted in the last ``window`` seconds, oldest first, formatted and redacted."""
        since = time.time() - window
        mine = [record for record, emitted_by in list(self.records) if emitted_by == who and record.created >= since]
        return [redact_text(cut(_line(record), LINE)) for record in mine[-limit:]]


def _line(record: logging.LogRecord) -> str:
    try:
        message = record.getMessage()  # the program's own % formatting of its own arguments
    except Exception as exc:
        message = f"{record.msg!s} (unformattable arguments: {type(exc).__name__})"
    return f"{record.levelname} {record.name}: {message}"


class _State:
    __slots__ = ("buffer", "lock", "window")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.buffer: RingBuffer | None = None
        self.window = 60.0


_STATE = _State()


def enable_log_capture(size: int = 200, level: int | str = logging.INFO, window: float = 60.0) -> None:
    """Keep the last ``size`` log records of the program (at ``level`` and above) for failure evidence.

    Call it once at start-up. A failure then carries the records its own thread and asyncio task
    emitted in the last ``window`` seconds, redacted. Calling it again replaces the buffer.
    The records a logger emits still depend on the levels the program set (``logging.INFO`` records
    of a logger left at the root's default ``WARNING`` are never emitted, so never kept).
    """
    if size < 1:
        raise ValueError("enable_log_capture(size=) is how many records to keep: at least 1")
    levelno = logging.getLevelName(level) if isinstance(level, str) else level
    if not isinstance(levelno, int):
        raise ValueError(f"unknown log level {level!r}")
    with _STATE.lock:
        disable_log_capture_locked()
        _STATE.buffer = RingBuffer(size, levelno)
        _STATE.window = window
        logging.getLogger().addHandler(_STATE.buffer)


def disable_log_capture() -> None:
    """Stop keeping log records (and forget those kept)."""
    with _STATE.lock:
        disable_log_capture_locked()


def disable_log_capture_locked() -> None:
    if _STATE.buffer is not None:
        logging.getLogger().removeHandler(_STATE.buffer)
        _STATE.buffer = None


def failure_logs(who: tuple[int, int] | None = None) -> list[str] | None:
    """The redacted records of ``who`` (default: the caller's scope); ``None`` when capture is off."""
    buffer = _STATE.buffer
    if buffer is None:
        return None
    return buffer.lines_for(who or _PINNED.get() or scope(), _STATE.window)
