"""What went wrong, and the evidence: captured once from the failing frame, redacted, fingerprinted."""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import linecache
import re
import traceback
import types
from collections.abc import Callable, Mapping
from typing import Any, Literal

from .._frames import OWN
from .._redact import MASK, is_secret_name, redact_text
from .._secrets import MIN_SECRET, known_secrets, pattern_of
from . import _gather as gather
from ._disclosure import Destination, evidence_policy
from ._logbuffer import failure_logs
from ._render import ReprBudget, render
from ._request import HealingRequested

FailureKind = Literal["exception", "verify", "test", "requested"]  # requested: request_healing()



def safe_repr(value: Any) -> str:
    """A bounded rendering of ``value`` that never raises and never runs a ``repr`` unguarded."""
    return render(value)


def _evidence(values: Mapping[str, Any], budget: ReprBudget | None = None) -> dict[str, str]:
    return gather.values(values, budget or ReprBudget(), limit=gather.LOCALS)


_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_NUMBER = re.compile(r"(?<![A-Za-z_])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_QUOTED = re.compile(r"b?'(?:[^'\\\n]|\\.)*'|b?\"(?:[^\"\\\n]|\\.)*\"")
_UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
_LONG_HEX = re.compile(r"\b(?=[0-9a-fA-F]*\d)[0-9a-fA-F]{8,}\b")  # digests, ids: at least one digit, 8+ long
_PATH = re.compile(r"(?<![\w.])(?:[A-Za-z]:)?(?:[/\\][^\s/\\:'\",;()\[\]{}<>]+){2,}[/\\]?")


def normalise_message(message: str, values: tuple[Any, ...] = ()) -> str:
    """The message with what varies from input to input replaced — the arguments' own text, quoted
    strings, UUIDs, long hex ids, paths, memory addresses and numbers — so that one bug has one
    fingerprint: ``"could not convert string to float: 'abc'"`` and ``…: 'two'`` are the same failure."""
    texts = sorted({v for v in values if type(v) is str and 2 <= len(v) <= 500}, key=len, reverse=True)
    message = message[:2000]
    for text in texts:  # an argument's own text, as a whole word: "unable" stays when the argument is "abl"
        message = re.sub(rf"(?<!\w){re.escape(text)}(?!\w)" if text[0].isalnum() or text[-1].isalnum()
                         else re.escape(text), "V", message)
    message = _QUOTED.sub("S", message)
    message = _UUID.sub("UUID", message)
    message = _PATH.sub("PATH", message)
    message = _ADDRESS.sub("ADDR", message)
    message = _LONG_HEX.sub("HEX", message)
    return _NUMBER.sub("N", message).replace("ADDR", "0x?")


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
    attributes: Mapping[str, str] = dataclasses.field(default_factory=dict)  # the exception's own attributes
    causes: tuple[str, ...] = ()  # the chained exceptions below it, one line each
    frames: tuple[str, ...] = ()  # the frames between the function and the raise (EvidencePolicy.frames)
    environment: Mapping[str, str] = dataclasses.field(default_factory=dict)  # EvidencePolicy.env_allowlist
    logs: tuple[str, ...] | None = None  # the failing call's log records; None: log capture is off
    withheld: frozenset[str] = frozenset()  # sections the destination this copy is for does not receive
    args: tuple[Any, ...] = dataclasses.field(default=(), repr=False, compare=False)
    kwargs: Mapping[str, Any] = dataclasses.field(default_factory=dict, repr=False, compare=False)
    # The values of the call's arguments and locals named like secrets (``password``): masked in every text of
    # this failure, and by the session in every text its candidates make (never shown, never stored).
    secrets: frozenset[str] = dataclasses.field(default=frozenset(), repr=False, compare=False)

    @property
    def fingerprint(self) -> str:
        """Names this failure for the cache, dedup and delivery: stable across runs and inputs."""
        values = (*self.args, *self.kwargs.values())
        key = "|".join((self.kind, self.exc_type, self.qualname, self.line.strip(),
                        normalise_message(self.message, values)))
        return hashlib.sha256(key.encode()).hexdigest()[:16]

    def disclosed(self, destination: Destination) -> Failure:
        """This failure as ``destination`` may see it: the sections the evidence policy withholds from
        it are emptied and named in ``withheld`` (absent, which is not the same as empty)."""
        withheld = evidence_policy().sections(destination).withheld()
        if not withheld:
            return self
        cleared: dict[str, Any] = {}
        if "arguments" in withheld:
            cleared.update(arguments={}, details={})
        if "locals" in withheld:
            cleared.update(locals={}, frames=())
        if "environment" in withheld:
            cleared["environment"] = {}
        if "logs" in withheld:
            cleared["logs"] = ()
        if "traceback" in withheld:
            cleared.update(traceback="", causes=(), attributes={})
        if "source" in withheld:
            cleared.update(line="", traceback=_without_source(cleared.get("traceback", self.traceback)))
        return dataclasses.replace(self, withheld=self.withheld | withheld, **cleared)

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
    policy = evidence_policy()
    budget = gather.budget_of(policy)
    frames = [(frame, lineno) for frame, lineno in traceback.walk_tb(exc.__traceback__)]
    own = [i for i, (f, _) in enumerate(frames) if _runs(f.f_code, func)]
    lineno, line, local_values = None, "", {}
    between: tuple[str, ...] = ()
    hidden = OWN
    if own:
        frame, lineno = frames[own[-1]]
        local_values = dict(frame.f_locals)
        line = redact_text(_line_of(frame.f_code.co_filename, lineno, frame.f_globals))
        if policy.frames:
            between = gather.frames_between(frames, own[-1], budget, hidden)
    user = traceback.StackSummary.extract((f, n) for f, n in frames if not f.f_code.co_filename.startswith(hidden))
    text = "".join([*user.format(), *traceback.format_exception_only(type(exc), exc)])
    requested = exc if isinstance(exc, HealingRequested) else None
    logs = failure_logs()
    bound = bind_arguments(func, args, kwargs)
    # A secret's value is masked where the exception quotes it too (``KeyError: 'Hunter2…'``), not only as a value.
    secrets = secret_values({**local_values, **bound})
    hide = _hider(secrets | known_secrets(func.__globals__))  # the module's SERVICE_TOKEN, the environment's too
    return Failure(
        kind="requested" if requested is not None else "exception",
        qualname=func.__qualname__,
        exc_type=_type_name(type(exc)),
        message=hide(redact_text(_message(exc))),
        traceback=hide(redact_text(text)),
        lineno=lineno,
        line=hide(line),
        arguments=_evidence(bound, budget),
        locals=_evidence(local_values, budget),
        reason=hide(redact_text(requested.reason)) if requested is not None else "",
        details=_evidence(requested.details, budget) if requested is not None else {},
        attributes={name: hide(value) for name, value in gather.attributes(exc, budget).items()},
        causes=tuple(hide(cause) for cause in gather.causes(exc, budget)),
        frames=tuple(hide(frame) for frame in between),
        environment=gather.environment(policy),
        logs=tuple(hide(record) for record in logs) if logs is not None else None,
        args=args,
        kwargs=kwargs,
        secrets=secrets,
    )


def secret_values(named: Mapping[str, Any]) -> frozenset[str]:
    """The text values of ``named`` (a call's arguments and locals) whose names say they are secrets, and such keys
    of a dict among them (``headers["Authorization"]``)."""
    found: set[str] = set()
    for name, value in named.items():
        items = list(value.items()) if type(value) is dict else [(name, value)]
        for key, item in items:
            if isinstance(key, str) and is_secret_name(key):
                text = item.decode("utf-8", "replace") if isinstance(item, bytes) else item
                if isinstance(text, str) and len(text) >= MIN_SECRET:
                    found.add(text)
    return frozenset(found)


def _hider(secrets: frozenset[str | bytes]) -> Callable[[str], str]:
    pattern, _ = pattern_of(frozenset(secrets))  # each value plain and encoded (regrow._secrets)
    return (lambda text: pattern.sub(MASK, text) if text else text) if pattern is not None else (lambda text: text)


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
    bound = bind_arguments(func, args, kwargs)
    secrets = secret_values(bound)
    hide = _hider(secrets | known_secrets(func.__globals__))
    line = hide(redact_text(_line_of(func.__code__.co_filename, lineno, func.__globals__))) if lineno else ""
    return Failure(
        kind=kind,
        qualname=func.__qualname__,
        exc_type=exc_type or ("VerificationError" if kind == "verify" else "AssertionError"),
        message=hide(redact_text(reason)),
        reason=hide(redact_text(reason)),
        lineno=lineno,
        line=line,
        arguments=_evidence(bound),
        args=args,
        kwargs=kwargs,
        secrets=secrets,
    )


def bind_arguments(func: types.FunctionType, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The call's arguments by parameter name (positionally numbered when they do not bind)."""
    try:
        bound = inspect.signature(func).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return {**{f"arg{i}": a for i, a in enumerate(args)}, **kwargs}
    return dict(bound.arguments)


def _without_source(text: str) -> str:
    """A formatted traceback without its source lines (the ``File …`` lines and the error stay)."""
    return "".join(line for line in text.splitlines(keepends=True) if not line.startswith("    "))


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


def failing_frame(exc: BaseException, func: types.FunctionType) -> tuple[types.CodeType | None, tuple[Any, ...]]:
    """The code object of ``func``'s frame in the traceback (the code that actually failed), and the bug's key:
    the exception type, where ``func`` was and where it was raised — the same for every input of one bug."""
    found, line, last = None, 0, None
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        code = frame.f_code
        last = (code, lineno)
        if code.co_name == func.__name__ and getattr(code, "co_qualname", func.__qualname__) == func.__qualname__:
            found, line = code, lineno
    return found, (type(exc), found, line, last)
