"""What went wrong, and the evidence: captured once from the failing frame, redacted, fingerprinted."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import inspect
import linecache
import re
import reprlib
import traceback
import types
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from ._redact import redact_text, redact_value
from ._request import HealingRequested
from ._sandbox import InProcessSandbox, Limits
from ._wrapper import WRAPPER_FILE

FailureKind = Literal["exception", "verify", "test", "requested"]  # requested: request_healing()

_PACKAGE_DIR = str(Path(__file__).resolve().parent)
_REPR_LIMIT = 400


class _Repr(reprlib.Repr):
    def __init__(self) -> None:
        super().__init__()
        self.maxstring = 160
        self.maxother = 160
        self.maxlist = self.maxtuple = self.maxset = self.maxdict = 12
        self.maxlevel = 4

    def repr_instance(self, obj: Any, level: int) -> str:
        name = type(obj).__name__
        if isinstance(type(obj).__repr__, types.FunctionType):
            # A __repr__ written in Python may be slow or hang: give it a bounded time of its own.
            outcome = _repr_sandbox().call(repr, obj, limits=Limits(timeout=_REPR_SECONDS))
            if outcome.status == "timeout":
                return f"<{name} (repr timed out)>"
            if not outcome.ok or not isinstance(outcome.value, str):
                kind = outcome.error.type if outcome.error else outcome.status
                return f"<{name} (repr raised {kind})>"
            text = outcome.value
        else:
            try:
                text = repr(obj)
            except Exception as exc:  # a repr that raises must not take the capture down
                return f"<{name} (repr raised {type(exc).__name__})>"
        return text if len(text) <= self.maxother else text[: self.maxother - 3] + "..."


_repr = _Repr()
_REPR_SECONDS = 0.25


@functools.cache
def _repr_sandbox() -> InProcessSandbox:
    return InProcessSandbox()


def safe_repr(value: Any) -> str:
    """A bounded ``repr`` that never raises."""
    try:
        text = _repr.repr(value)
    except Exception as exc:
        text = f"<{type(value).__name__} (repr raised {type(exc).__name__})>"
    return text if len(text) <= _REPR_LIMIT else text[: _REPR_LIMIT - 3] + "..."


def _evidence(values: Mapping[str, Any]) -> dict[str, str]:
    return {name: redact_value(name, safe_repr(value)) for name, value in values.items() if not name.startswith("__")}


_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_NUMBER = re.compile(r"(?<![A-Za-z_])-?\d+(?:\.\d+)?")


def normalise_message(message: str) -> str:
    """The message with memory addresses and numbers replaced, so that one bug has one fingerprint."""
    return _NUMBER.sub("N", _ADDRESS.sub("ADDR", message)).replace("ADDR", "0x?")


@dataclasses.dataclass(frozen=True)
class Failure:
    """One failure of the target: the evidence a proposer sees, already redacted.

    ``args`` and ``kwargs`` are the live call arguments (kept for replaying the call, never shown
    to a proposer unredacted); ``arguments`` and ``locals`` are their redacted reprs.
    """

    kind: FailureKind
    qualname: str
    exc_type: str
    message: str
    traceback: str = ""
    lineno: int | None = None
    line: str = ""
    arguments: Mapping[str, str] = dataclasses.field(default_factory=dict)
    locals: Mapping[str, str] = dataclasses.field(default_factory=dict)
    reason: str = ""
    details: Mapping[str, str] = dataclasses.field(default_factory=dict)  # request_healing(details=), redacted
    args: tuple[Any, ...] = dataclasses.field(default=(), repr=False, compare=False)
    kwargs: Mapping[str, Any] = dataclasses.field(default_factory=dict, repr=False, compare=False)

    @property
    def fingerprint(self) -> str:
        """Names this failure for the cache, dedup and delivery: stable across runs and inputs."""
        key = "|".join((self.kind, self.exc_type, self.qualname, self.line.strip(), normalise_message(self.message)))
        return hashlib.sha256(key.encode()).hexdigest()[:16]

    def summary(self) -> str:
        """One line: what failed and why."""
        what = f"{self.exc_type}: {self.message}" if self.message else self.exc_type
        where = f" at line {self.lineno}" if self.lineno else ""
        return f"{self.qualname}{where}: {what}"


def capture_exception(
    exc: BaseException,
    func: types.FunctionType,
    args: tuple[Any, ...] = (),
    kwargs: Mapping[str, Any] | None = None,
) -> Failure:
    """Build a :class:`Failure` from an exception raised by a call of ``func``.

    The locals come from the deepest traceback frame that runs ``func``'s code (the user's frame,
    not regrow's); the traceback keeps only frames outside regrow.
    """
    kwargs = dict(kwargs or {})
    frames = [(frame, lineno) for frame, lineno in traceback.walk_tb(exc.__traceback__)]
    own = [(f, n) for f, n in frames if _runs(f.f_code, func)]
    lineno, line, local_values = None, "", {}
    if own:
        frame, lineno = own[-1]
        local_values = dict(frame.f_locals)
        line = redact_text(_line_of(frame.f_code.co_filename, lineno, frame.f_globals))
    user = traceback.StackSummary.extract(
        (f, n) for f, n in frames if not f.f_code.co_filename.startswith((_PACKAGE_DIR, WRAPPER_FILE))
    )
    text = "".join([*user.format(), *traceback.format_exception_only(type(exc), exc)])
    requested = exc if isinstance(exc, HealingRequested) else None
    return Failure(
        kind="requested" if requested is not None else "exception",
        qualname=func.__qualname__,
        exc_type=_type_name(type(exc)),
        message=redact_text(_message(exc)),
        traceback=redact_text(text),
        lineno=lineno,
        line=line,
        arguments=_evidence(bind_arguments(func, args, kwargs)),
        locals=_evidence(local_values),
        reason=redact_text(requested.reason) if requested is not None else "",
        details=_evidence(requested.details) if requested is not None else {},
        args=args,
        kwargs=kwargs,
    )


def check_failure(
    kind: FailureKind,
    func: types.FunctionType,
    reason: str,
    args: tuple[Any, ...] = (),
    kwargs: Mapping[str, Any] | None = None,
    exc_type: str = "",
    lineno: int | None = None,
) -> Failure:
    """A :class:`Failure` for a call that returned but failed a check (``verify=`` or tests).

    ``lineno`` is the file line in the function where the failure surfaced, when known.
    """
    kwargs = dict(kwargs or {})
    line = redact_text(_line_of(func.__code__.co_filename, lineno, func.__globals__)) if lineno else ""
    return Failure(
        kind=kind,
        qualname=func.__qualname__,
        exc_type=exc_type or ("VerificationError" if kind == "verify" else "AssertionError"),
        message=redact_text(reason),
        reason=redact_text(reason),
        lineno=lineno,
        line=line,
        arguments=_evidence(bind_arguments(func, args, kwargs)),
        args=args,
        kwargs=kwargs,
    )


def bind_arguments(func: types.FunctionType, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The call's arguments by parameter name (positionally numbered when they do not bind)."""
    try:
        bound = inspect.signature(func).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return {**{f"arg{i}": a for i, a in enumerate(args)}, **kwargs}
    return dict(bound.arguments)


def _runs(code: types.CodeType, func: types.FunctionType) -> bool:
    if code is func.__code__:
        return True
    # An earlier fix (or another thread's) may have swapped the code since the call began.
    return code.co_name == func.__name__ and getattr(code, "co_qualname", func.__qualname__) == func.__qualname__


def _line_of(filename: str, lineno: int, module_globals: dict[str, Any]) -> str:
    return linecache.getline(filename, lineno, module_globals).strip()


def _message(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:
        return f"<unprintable {type(exc).__name__}>"


def _type_name(kind: type) -> str:
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
