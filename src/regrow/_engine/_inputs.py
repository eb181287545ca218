"""Inputs beyond the tests: the calls the tests made, small variations of them, and how two versions
of a function behave on them.

The overfitting guard compares a candidate with the original on these inputs; the benchmark
compares a fix with the reference version. Variations are deterministic: ±1 on numbers, lists
shortened or reversed, strings trimmed.

Recorded calls hold arbitrary objects, which are never unpickled in the host: a worker records
them and hands them over *sealed* (:class:`SealedCall`: the arguments pickled, with a key and a
display text made beside them), the host keeps and forwards the seals as opaque text, and only a
worker opens them again — to vary them (the ``"vary"`` job) or to call a function on them.
"""

from __future__ import annotations

import base64
import copy
import dataclasses
import hashlib
import math
import pickle
import re
import types
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ._worker import Overrun, Worker, time_limit

_MAX_SEAL = 256 << 10  # bytes of pickled arguments one sealed call may hold; a larger call is not kept
_MAX_SHOWN = 2000


@dataclasses.dataclass(frozen=True)
class Call:
    """The arguments of one call of the target."""

    args: tuple[Any, ...]
    kwargs: dict[str, Any]

    def fresh(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """Copies of the arguments, so a function that mutates them cannot spoil the next call."""
        try:
            return copy.deepcopy(self.args), copy.deepcopy(self.kwargs)
        except Exception:
            return self.args, dict(self.kwargs)

    def key(self) -> str:
        return _safe_repr((self.args, sorted(self.kwargs.items())))

    def shown(self) -> str:
        """The arguments as a reader sees them, each cut to 80 characters."""
        return ", ".join([*(_safe_repr(a)[:80] for a in self.args),
                          *(f"{k}={_safe_repr(v)}"[:80] for k, v in self.kwargs.items())])

    def seal(self) -> SealedCall | None:
        """This call sealed for the host, or ``None`` when its arguments cannot be pickled (or are huge)."""
        try:
            blob = pickle.dumps((self.args, self.kwargs), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:
            return None
        if len(blob) > _MAX_SEAL:
            return None
        key = hashlib.sha256(self.key().encode("utf-8", "surrogatepass")).hexdigest()  # a repr may be huge
        return SealedCall(key, self.shown()[:_MAX_SHOWN], base64.b64encode(blob).decode("ascii"))


@dataclasses.dataclass(frozen=True)
class SealedCall:
    """A recorded call as the host holds it: plain text only.

    ``blob`` is the pickled arguments, base64-encoded. The host never opens it (it may come from a
    worker that ran candidate code); it only passes it back to a worker, where :meth:`open` runs.
    """

    key: str  # a hash of Call.key(): equal keys, equal calls
    shown: str  # Call.shown(), for messages
    blob: str

    def open(self) -> Call:
        """The call itself. Unpickles: only in a worker, or in the process that sealed it."""
        args, kwargs = pickle.loads(base64.b64decode(self.blob))
        return Call(tuple(args), dict(kwargs))

    def to_plain(self) -> dict[str, str]:
        return {"key": self.key, "shown": self.shown, "blob": self.blob}

    @classmethod
    def from_plain(cls, data: Any) -> SealedCall:
        """From untrusted plain data; ``ValueError`` unless it has exactly the right shape."""
        if type(data) is not dict or set(data) != {"key", "shown", "blob"}:
            raise ValueError("a sealed call must be an object with key, shown and blob")
        if not all(type(value) is str for value in data.values()):
            raise ValueError("a sealed call's fields must be strings")
        return cls(data["key"], data["shown"], data["blob"])


def seal_all(calls: Sequence[Call]) -> list[SealedCall]:
    """The calls that can be sealed, sealed, in order."""
    return [sealed for call in calls if (sealed := call.seal()) is not None]


def sealed_list(data: Any) -> list[SealedCall]:
    """A list of sealed calls from untrusted plain data (``ValueError`` if it is anything else)."""
    if type(data) is not list:
        raise ValueError(f"expected a list of sealed calls, got {type(data).__name__}")
    return [SealedCall.from_plain(item) for item in data]


def open_all(data: Any) -> list[Call]:
    """Plain sealed calls, opened: in a worker only."""
    return [call.open() for call in sealed_list(data)]


def signatures(count: int) -> Callable[[Any], list[str]]:
    """A reader for a ``"behaviour"`` reply: a list of ``count`` strings (``ValueError`` otherwise)."""

    def read(data: Any) -> list[str]:
        if type(data) is not list or len(data) != count or not all(type(item) is str for item in data):
            raise ValueError(f"expected a list of {count} behaviour signatures")
        return data

    return read


def _safe_repr(value: object) -> str:
    try:
        return repr(value)
    except Exception:
        return f"<{type(value).__name__}>"


def arguments_of(code: types.CodeType, f_locals: dict[str, Any]) -> Call:
    """The call a frame was entered with, read from its locals at the ``call`` event."""
    names = code.co_varnames
    positional = code.co_argcount
    args = [f_locals[name] for name in names[:positional]]
    kwargs = {name: f_locals[name] for name in names[positional : positional + code.co_kwonlyargcount]}
    at = positional + code.co_kwonlyargcount
    if code.co_flags & 0x04:  # CO_VARARGS
        args.extend(f_locals[names[at]])
        at += 1
    if code.co_flags & 0x08:  # CO_VARKEYWORDS
        kwargs.update(f_locals[names[at]])
    return Call(*Call(tuple(args), kwargs).fresh())


def _variants(value: Any) -> Iterator[Any]:
    """Small changes of one argument, keeping its type."""
    if isinstance(value, bool):
        yield not value
    elif isinstance(value, int):
        yield value + 1
        yield value - 1
    elif isinstance(value, float) and math.isfinite(value):
        yield value + 1.0
        yield value - 1.0
    elif isinstance(value, str) and value:
        yield value[1:]
        yield value[:-1]
        if value.strip() != value:
            yield value.strip()
    elif isinstance(value, (list, tuple)) and value:
        yield value[:-1]
        yield value[1:]
        if len(value) > 1:
            yield value[::-1]
    elif isinstance(value, dict) and value:
        yield dict(list(value.items())[:-1])


def derive(calls: Sequence[Call], limit: int = 120) -> list[Call]:
    """New calls, each one argument of a given call changed a little; none equal to a given call."""
    seen = {call.key() for call in calls}
    made: list[Call] = []
    per_call = [list(_derived(call)) for call in calls]
    for round_ in range(max((len(group) for group in per_call), default=0)):
        for group in per_call:  # round-robin, so every given call contributes before the limit cuts
            if round_ < len(group) and len(made) < limit:
                key = group[round_].key()
                if key not in seen:
                    seen.add(key)
                    made.append(group[round_])
    return made


def vary_job(given: Any, limit: int) -> list[dict[str, str]]:
    """The ``"vary"`` job (runs in a worker): :func:`derive` on plain sealed calls, the result sealed."""
    return [call.to_plain() for call in seal_all(derive(open_all(given), limit))]


def variations(worker: Worker, given: Sequence[SealedCall], limit: int, timeout: float = 5.0) -> list[SealedCall]:
    """:func:`derive` for sealed calls, run in the worker's ``"vary"`` job (none if that fails)."""
    if not given or limit <= 0:
        return []
    status, made = worker.call("vary", [call.to_plain() for call in given], limit, timeout=timeout, read=sealed_list)
    return made if status == "ok" else []


def _derived(call: Call) -> Iterator[Call]:
    for i, value in enumerate(call.args):
        for variant in _variants(value):
            yield Call((*call.args[:i], variant, *call.args[i + 1 :]), call.kwargs)
    for name, value in call.kwargs.items():
        for variant in _variants(value):
            yield Call(call.args, {**call.kwargs, name: variant})


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def behaviour(fn: Callable[..., Any], calls: Sequence[Call], limit: float = 0.25) -> list[str]:
    """What ``fn`` does on each call, as comparable signatures; each call under its own time limit.

    Meant to run in a worker job (the limit interrupts only there; the worker's own limit is the
    backstop). A signature is ``"returned <repr of the result and the arguments after>"``,
    ``"raised <exception type>"`` or ``"timeout"``.
    """
    return [_observe(fn, call, limit) for call in calls]


def _observe(fn: Callable[..., Any], call: Call, limit: float) -> str:
    args, kwargs = call.fresh()
    try:
        with time_limit(limit):
            value = fn(*args, **kwargs)
    except Overrun:
        return "timeout"
    except BaseException as exc:
        return f"raised {type(exc).__name__}"
    # Addresses in default reprs differ between any two runs; they say nothing about behaviour.
    return "returned " + _ADDRESS.sub("", _safe_repr((value, args, kwargs))[:4000])


def returned(signature: str) -> bool:
    return signature.startswith("returned ")
