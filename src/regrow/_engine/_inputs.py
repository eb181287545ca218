"""Inputs beyond the tests: the calls the tests made, small variations of them, and how two versions
of a function behave on them.

The overfitting guard compares a candidate with the original on these inputs; the benchmark
compares a fix with the reference version. Variations are deterministic: ±1 on numbers, lists
shortened or reversed, strings trimmed.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import re
import types
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ._worker import Overrun, time_limit


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
