"""What every sandbox shares: the limits a call runs under and the outcome it ends as.

A sandbox runs one callable in isolation and always returns an :class:`Outcome`; a hang, a crash,
a memory blow-up or hostile code ends as an outcome with a reason, never as a hung or dead host.
"""

from __future__ import annotations

import builtins
import dataclasses
import os
import re
import tempfile
import weakref
from collections.abc import Callable
from typing import Any, Literal, Protocol, runtime_checkable

from .._secrets import mask
from ._cleanup import remove_tree

Status = Literal["ok", "error", "timeout", "crashed", "refused"]

TEXT_LIMIT = 2000  # characters of a reason, a detail or an error message that a host keeps
TRACEBACK_LIMIT = 20000
# What a terminal acts on (ESC, CSI, OSC 52 to the clipboard, CR, backspace), bidi overrides that reorder
# what a reader sees, and lone surrogates (a logging stream cannot encode them): never shown as sent.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff\ud800-\udfff]")


def clean(text: str, limit: int = TEXT_LIMIT) -> str:
    """Text that came from a sandboxed call, safe to log or show: at most ``limit`` characters (an ellipsis
    says it was cut) and every control character but newline and tab replaced by ``?``."""
    if type(text) is not str:
        text = str(text)
    kept = _UNSAFE.sub("?", text[: limit + 1])
    return kept if len(kept) <= limit else kept[:limit] + "…"


def scratch_folder(owner: object, prefix: str) -> str:
    """A new private folder for ``owner``'s children, removed when ``owner`` is closed or collected or the
    process exits without closing it — by the process that made it only (a forked child that exits
    normally must not remove the folder its parent still uses)."""
    path = os.path.realpath(tempfile.mkdtemp(prefix=prefix))
    weakref.finalize(owner, _remove, path, os.getpid())
    return path


def _remove(path: str, owner_pid: int) -> None:
    if os.getpid() == owner_pid:
        remove_tree(path)  # not shutil.rmtree: a deep enough tree defeats it


@dataclasses.dataclass(frozen=True, slots=True)
class Limits:
    """Resource limits for one sandboxed call.

    ``timeout`` is wall-clock seconds and is enforced by every mode. The others are enforced only
    where the mode can (``fork`` and ``pool`` apply them with ``setrlimit`` in the child).
    ``memory_bytes`` is address space the call may add to what its process already has mapped
    (a forked child starts with the host's whole mapping). ``processes`` is how many processes
    the call may start (0: none, refused by the audit hook; ``None``: no limit).
    ``result_bytes`` caps each frame that comes back from a child process (the encoded return value
    among them); all the frames of one call may together take ``4 * result_bytes + 1 MiB`` to decode.
    ``scratch_bytes`` is what the call's scratch folder may hold in all (data, and one inode per 4 KiB
    of it): where the kernel allows it (Linux, as root) the folder is a private ``tmpfs`` of that size,
    ``noexec``, which exists only in the child's mount namespace and is gone with it; ``None``, or
    without root, the folder is a plain one on the host's disk (bounded per file by ``file_size_bytes``).
    ``views`` are absolute folders whose writes go to a throwaway view (:mod:`._views`): the call reads
    the real folder and writes a copy that is gone with it (Linux, as root, with a private scratch; at
    most four; a folder that gets no view stays refused for writes, as any folder outside scratch).
    ``environ_keep`` names environment variables the call keeps although they look like secrets (the
    configuration the function reads, :mod:`regrow._target._environ`); every other secret is removed as ever.
    """

    timeout: float = 2.0
    cpu_seconds: int | None = None
    memory_bytes: int | None = 2 << 30
    file_size_bytes: int | None = 16 << 20
    processes: int | None = 0
    result_bytes: int = 16 << 20
    scratch_bytes: int | None = 64 << 20
    views: tuple[str, ...] = ()
    environ_keep: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True)
class ErrorInfo:
    """An exception as plain data: it can cross a process boundary without pickle."""

    type: str
    message: str
    traceback: str = ""

    @classmethod
    def from_exception(cls, exc: BaseException, traceback: str = "") -> ErrorInfo:
        kind = type(exc)
        name = kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
        return cls(clean(name, 200), clean(_safe_str(exc)), clean(traceback[-TRACEBACK_LIMIT:], TRACEBACK_LIMIT))

    def exception(self) -> BaseException:
        """The exception rebuilt as its own type where that is a builtin, else a ``RuntimeError``."""
        kind = getattr(builtins, self.type, None)
        if isinstance(kind, type) and issubclass(kind, BaseException):
            try:
                return kind(self.message)
            except Exception:  # a builtin exception whose constructor wants other arguments
                pass
        return RuntimeError(f"{self.type}: {self.message}")

    def __str__(self) -> str:
        return f"{self.type}: {self.message}" if self.message else self.type


@dataclasses.dataclass(frozen=True, slots=True)
class Outcome:
    """How one sandboxed call ended.

    ``output`` is what the call printed (captured by the process modes, truncated); ``violations``
    lists each action the runtime guard refused, which makes the status ``"refused"``.
    """

    status: Status
    value: Any = None
    error: ErrorInfo | None = None
    duration: float = 0.0
    detail: str = ""
    output: str = ""
    violations: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def reason(self) -> str:
        """One line that says why the call did not return normally (empty when it did), safe to log:
        capped at ``TEXT_LIMIT`` characters, control characters replaced (:func:`clean`)."""
        if self.status == "ok":
            return ""
        if self.status == "error" and self.error is not None:
            return clean(str(self.error))
        if self.detail.startswith(self.status):  # "refused open for writing …", not "refused: refused …"
            return clean(self.detail)
        return clean(f"{self.status}: {self.detail}" if self.detail else self.status)


def globals_of(fn: object) -> dict[str, Any] | None:
    """The module globals of a function (``None`` for anything else)."""
    namespace = getattr(fn, "__globals__", None)
    return namespace if type(namespace) is dict else None


def masked(outcome: Outcome, namespace: dict[str, Any] | None = None) -> Outcome:
    """``outcome`` with every secret the host knows masked in each text the call produced (plain and encoded:
    :func:`regrow._secrets.mask`), so that ``Outcome.reason()`` and its fields are safe to log or show.
    The globals of ``namespace`` (the called function's module) count among the secrets; so do those of
    the user's modules loaded in the host."""
    error, texts = outcome.error, (outcome.detail, outcome.output, *outcome.violations)
    if not any(texts) and error is None:
        return outcome
    if error is not None:
        error = ErrorInfo(mask(error.type, namespace), mask(error.message, namespace),
                          mask(error.traceback, namespace))
    return dataclasses.replace(outcome, error=error, detail=mask(outcome.detail, namespace),
                               output=mask(outcome.output, namespace),
                               violations=tuple(mask(text, namespace) for text in outcome.violations))


@runtime_checkable
class Sandbox(Protocol):
    """Runs a callable in isolation. ``call`` never raises for anything the callable does."""

    name: str

    def call(self, fn: Callable[..., Any], /, *args: Any, limits: Limits | None = None) -> Outcome: ...

    def close(self) -> None: ...


def _safe_str(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:  # an exception whose __str__ raises must not take the host down
        return f"<unprintable {type(exc).__name__}>"
