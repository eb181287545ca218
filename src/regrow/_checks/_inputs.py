"""Inputs beyond the tests: the calls the tests made, small variations of them, and how two versions
of a function behave on them.

The overfitting guard compares a candidate with the original on these inputs; the benchmark
compares a fix with the reference version. Variations are deterministic: ±1 on numbers, lists
shortened or reversed, strings trimmed (:func:`derive`); the benchmark's are wider (:func:`widen`).

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
import inspect
import itertools
import pickle
import types
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from .._redact import MASK, is_secret_name, redact_text
from .._sandbox._warm import Worker
from .._sandbox._warm_child import Overrun, time_limit
from ._render import ADDRESS, readable
from ._widen import fields_varied, inserted, paired, plain_variants, streams, wide_variants

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
        """The arguments as a reader sees them, each cut to 80 characters, credentials masked: the text goes
        into messages, logs, the ledger and a model's prompt (an ambiguity's separating input)."""
        return ", ".join([*(redact_text(readable(a))[:80] for a in self.args),
                          *(f"{k}={MASK if is_secret_name(k) else redact_text(readable(v))}"[:80]
                            for k, v in self.kwargs.items())])

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
    """Small changes of one argument, keeping its type: :func:`plain_variants`, and an object's number
    fields ±1 (a receiver, a record; ``__slots__`` too): a method whose candidates differ only on states
    the tests never built shows it there (``Bits('10')`` gives ``Bits('11')``)."""
    yield from plain_variants(value)
    if not isinstance(value, (bool, int, float, str, bytes, list, tuple, dict)):
        yield from fields_varied(value, _step, slots=True)


def _step(value: Any) -> Iterator[Any]:
    yield from (value + 1, value - 1)


def derive(calls: Sequence[Call], limit: int = 120, texts: Sequence[str] = ()) -> list[Call]:
    """New calls, each one argument of a given call changed a little; none equal to a given call. With
    ``texts`` (see :func:`constant_texts`), after those: each text put into each string argument. Then two
    positional arguments changed at once (the first few changes of each): a receiver's other state with
    another index shows what neither change alone does."""
    seen = {call.key() for call in calls}
    made: list[Call] = []
    per_call = [[*_derived(call, _variants), *_derived(call, lambda value: inserted(value, texts)),
                 *(Call(args, call.kwargs) for args in paired(call.args, _variants))] for call in calls]
    for round_ in range(max((len(group) for group in per_call), default=0)):
        for group in per_call:  # round-robin, so every given call contributes before the limit cuts
            if round_ < len(group) and len(made) < limit:
                key = group[round_].key()
                if key not in seen:
                    seen.add(key)
                    made.append(group[round_])
    return made


def vary_job(given: Any, limit: int, with_texts: bool = False, wide: bool = False,
             texts: Sequence[str] = ()) -> list[dict[str, str]]:
    """The ``"vary"`` job (runs in a worker): :func:`derive` on plain sealed calls (with ``texts`` if asked
    ``with_texts``), or, asked ``wide``, :func:`widen`'s calls that :func:`derive` does not make; sealed."""
    calls = open_all(given)
    made = derive(calls, limit, texts if with_texts else ())
    if wide:
        seen = {call.key() for call in made}
        made = [call for call in widen(calls, limit + len(made)) if call.key() not in seen][:limit]
    return [call.to_plain() for call in seal_all(made)]


def variations(worker: Worker, given: Sequence[SealedCall], limit: int, timeout: float = 5.0,
               with_texts: bool = False, wide: bool = False) -> list[SealedCall]:
    """:func:`derive` for sealed calls, run in the worker's ``"vary"`` job (none if that fails); ``with_texts``:
    the job's texts put into string arguments too; ``wide``: :func:`widen`'s calls instead, those not made so."""
    if not given or limit <= 0:
        return []
    plain = [call.to_plain() for call in given]
    status, made = worker.call("vary", plain, limit, with_texts, wide, timeout=timeout, read=sealed_list)
    return made if status == "ok" else []


def _derived(call: Call, variants: Callable[[Any], Iterator[Any]]) -> Iterator[Call]:
    for i, value in enumerate(call.args):
        for variant in variants(value):
            yield Call((*call.args[:i], variant, *call.args[i + 1 :]), call.kwargs)
    for name, value in call.kwargs.items():
        for variant in variants(value):
            yield Call(call.args, {**call.kwargs, name: variant})


def behaviour(fn: Callable[..., Any], calls: Sequence[Call], limit: float = 0.25,
              show: Callable[[object], str] = _safe_repr) -> list[str]:
    """What ``fn`` does on each call, as comparable signatures, each call under its own time limit (in a worker
    job: the worker's own limit is the backstop): ``"returned <show of the result>"`` and, if the call changed its
    arguments, ``", leaving the arguments as <them>"`` (equal when both are), ``"raised <type>"`` or ``"timeout"``."""
    return [_observe(fn, call, limit, show) for call in calls]


def _observe(fn: Callable[..., Any], call: Call, limit: float, show: Callable[[object], str] = _safe_repr) -> str:
    args, kwargs = call.fresh()
    before = show((args, kwargs))
    try:
        with time_limit(limit):
            value = fn(*args, **kwargs)
    except Overrun:
        return "timeout"
    except BaseException as exc:
        return f"raised {type(exc).__name__}"
    left = "" if show((args, kwargs)) == before else ", leaving the arguments as " + (
        f"{show(args)} and {show(kwargs)}" if kwargs else show(args))
    return "returned " + ADDRESS.sub("", (show(value) + left)[:4000])  # addresses differ every run: no behaviour


def returned(signature: str) -> bool:
    return signature.startswith("returned ")


def optional_parameters(fn: Callable[..., Any]) -> tuple[frozenset[int], frozenset[str]]:
    """The positions (in a recorded call's ``args``) and keyword-only names of ``fn``'s parameters
    that are optional: with a default, or annotated as admitting ``None``."""
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return frozenset(), frozenset()
    positions: set[int] = set()
    names: set[str] = set()
    index = 0
    for parameter in parameters:
        annotation = parameter.annotation
        text = annotation if isinstance(annotation, str) else repr(annotation)
        optional = parameter.default is not parameter.empty or (
            annotation is not parameter.empty and ("None" in text or "Optional" in text))
        if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
            if optional:
                positions.add(index)
            index += 1
        elif parameter.kind is parameter.KEYWORD_ONLY and optional:
            names.add(parameter.name)
    return frozenset(positions), frozenset(names)


def widen(calls: Sequence[Call], limit: int = 400,
          optional: tuple[frozenset[int], frozenset[str]] = (frozenset(), frozenset())) -> list[Call]:
    """New calls, each one argument of a given call changed by :func:`wide_variants` (or set to
    ``None`` where its parameter is optional), or two arguments swapped, given each other's value or
    changed at once (:mod:`._widen`); round-robin over every argument of every call, so each
    contributes before ``limit`` cuts; none equal to a given call or to each other."""
    seen = {call.key() for call in calls}
    pending = [stream for call in calls for stream in (
        *(_argument_calls(call, at, value, optional) for at, value in enumerate(call.args)),
        *(_argument_calls(call, name, value, optional) for name, value in call.kwargs.items()),
        *(_positional_calls(call, both) for both in streams(call.args, wide_variants)))]
    made: list[Call] = []
    while pending and len(made) < limit:
        for stream in list(pending):
            try:
                call = next(stream)
                key = call.key()
            except StopIteration:
                pending.remove(stream)
                continue
            except Exception:  # a value whose copy, slice or repr fails: nothing more from this argument
                pending.remove(stream)
                continue
            if key not in seen and len(made) < limit:
                seen.add(key)
                made.append(call)
    return made


def _positional_calls(call: Call, stream: Iterator[tuple[Any, ...]]) -> Iterator[Call]:
    for args in stream:
        yield Call(args, call.kwargs)


def _argument_calls(call: Call, where: int | str, value: Any,
                    optional: tuple[frozenset[int], frozenset[str]]) -> Iterator[Call]:
    variants: Iterator[Any] = wide_variants(value)
    if value is not None and where in (optional[0] if isinstance(where, int) else optional[1]):
        variants = itertools.chain([None], variants)
    for variant in variants:
        if isinstance(where, int):
            yield Call((*call.args[:where], variant, *call.args[where + 1 :]), call.kwargs)
        else:
            yield Call(call.args, {**call.kwargs, where: variant})


def widen_job(fn: Callable[..., Any]) -> Callable[[Any, int], list[dict[str, str]]]:
    """A ``"widen"`` job for a worker: :func:`widen` on plain sealed calls of ``fn``, the result sealed."""
    optional = optional_parameters(fn)
    return lambda given, limit: [call.to_plain() for call in seal_all(widen(open_all(given), limit, optional))]


def observe(fn: Callable[..., Any], call: Call, limit: float = 0.25) -> str:
    """What ``fn`` does on one call, as a :func:`behaviour` signature (in a worker: see there)."""
    return _observe(fn, call, limit)
