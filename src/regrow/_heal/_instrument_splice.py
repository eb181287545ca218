"""The instrumented code made from the running bytecode alone, on Python 3.11-3.13: no source read, no compile.

What :mod:`._instrument_code` compiles from the definition's text — the body inside ``try``/``except
Exception`` whose handler calls the hook — is, on 3.11+, the running code's bytes with a handler after
them, one more entry in the exception table for every stretch of the body no ``try`` of its own covers,
and the handler's positions after the body's. This module writes exactly that: the handler's
instructions, their inline caches, the constants and names they use, the stack they need, the entries
and the positions, with the parameters kept at entry (where the body rebinds them) copied to locals of
their own. ``tests/heal/test_instrument_splice.py`` compares what it makes with what the compiler makes
from the text, function by function, on the standard library.

It applies to plain functions (no cells or free variables, no ``EXTENDED_ARG``, a ``**kwargs`` the body
never reads), and on 3.11 to generators and coroutines of that kind too (their handler yields from the
hook's result, or awaits its ``acaught``); for anything else — async generators, and generators and
coroutines on 3.12+, whose code ends with a handler of its own and whose yields say how many ``try``
blocks stand around them — :func:`spliced` gives ``None`` and the text is compiled as before. The ``def``
line, where the handler stands, is read from the source when there is one (else the code's first line).
"""

from __future__ import annotations

import dis
import functools
import inspect
import opcode
import sys
import types
from typing import Any

from ._instrument_bytes import PREFIX
from ._instrument_lines import positions

_OP = dis.opmap
_VERSION = sys.version_info[:2]
APPLIES = (3, 11) <= _VERSION <= (3, 13)
_ODD = inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE
# 3.11 alone: a generator or coroutine begins RETURN_GENERATOR, POP_TOP, RESUME and its handler needs no more than
# a yield or an await of its own (3.12 puts a StopIteration handler after the code and marks each yield's depth)
_SUSPENDS = inspect.CO_GENERATOR | inspect.CO_COROUTINE
_PROLOGUE = bytes((_OP["RETURN_GENERATOR"], 0, _OP["POP_TOP"], 0, _OP["RESUME"], 0)) if _VERSION == (3, 11) else b""
_MANY = 16  # more parameters than this: the compiler builds the tuple another way; left to it
_LOCALS = tuple(op for op in dis.haslocal if op < 256)  # 3.12 lists pseudo-instructions too
# 3.13's pairs: two local numbers of four bits each in one argument
_PAIRS = {_OP[name] for name in ("LOAD_FAST_LOAD_FAST", "STORE_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST")
          if name in _OP}
# the handler's instructions as each version writes them
_IF_FALSE = "POP_JUMP_FORWARD_IF_FALSE" if _VERSION < (3, 12) else "POP_JUMP_IF_FALSE"
_TO_TUPLE = ("LIST_TO_TUPLE", 0) if _VERSION < (3, 12) else ("CALL_INTRINSIC_1", 6)  # INTRINSIC_LIST_TO_TUPLE
_TEST = [("TO_BOOL", 0)] if _VERSION >= (3, 13) else []  # 3.13 makes a value a bool before it branches on it
_NAMES = 255 if _VERSION < (3, 12) else 127  # 3.12+: LOAD_ATTR's argument is the name's number times two, plus one


def _inline(name: str) -> int:
    """How many inline cache units follow the instruction ``name`` (3.13 keeps them by name)."""
    table: Any = getattr(opcode, "_inline_cache_entries", {})
    if isinstance(table, dict):
        return int(table.get(name, 0))
    return int(table[_OP[name]]) if _OP[name] < len(table) else 0  # 3.12: a pseudo-instruction has none


_CACHES = {name: _inline(name) for name in ("LOAD_METHOD", "LOAD_ATTR", "PRECALL", "CALL", "TO_BOOL", _IF_FALSE)
           if name in _OP}


def spliced(func: types.FunctionType, code: types.CodeType, hook: object, kept: set[int]) -> types.CodeType | None:
    """``code`` with its body inside a ``try`` whose handler calls ``hook`` (``kept``: the numbers of the
    locals the body stores to), or ``None`` where this does not apply."""
    if not APPLIES or code.co_flags & _ODD or code.co_cellvars or code.co_freevars:
        return None
    raw = code.co_code
    suspends = code.co_flags & _SUSPENDS
    prologue = len(_PROLOGUE) // 2 if suspends else 1  # in code units
    if _OP["EXTENDED_ARG"] in raw[0::2] or (raw[:6] != _PROLOGUE if suspends else raw[0] != _OP["RESUME"]):
        return None
    names, flags = code.co_varnames, code.co_flags
    if any(name.startswith(PREFIX) for name in (*names, *code.co_names)):
        return None
    params = code.co_argcount + code.co_kwonlyargcount + bool(flags & inspect.CO_VARARGS)
    if flags & inspect.CO_VARKEYWORDS:
        if params in _referenced(raw):
            return None  # a **kwargs the body reads or changes is copied at entry by the compiled text
        params += 1
    keep = tuple(index for index in range(params) if index in kept)
    keywords = names[code.co_argcount:code.co_argcount + code.co_kwonlyargcount]
    if any(name.startswith("_") and "__" in name for name in keywords):
        return None  # a private name, mangled here: the text's name is the keyword
    consts, globals_ = len(code.co_consts), code.co_names
    if params > _MANY or len(names) + len(keep) > 255 or consts + _MANY + 3 > 255 or len(globals_) + 2 > _NAMES:
        return None  # an argument past a byte would take EXTENDED_ARG
    method = "gcaught" if flags & inspect.CO_GENERATOR else "acaught" if flags & inspect.CO_COROUTINE else "caught"
    added = tuple(name for name in (method, "result") if name not in globals_)
    caught, result = ((globals_ + added).index(name) for name in (method, "result"))
    star = flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS | _SUSPENDS)
    handler, stack, extra = _handler(code.co_argcount, keywords, star, keep, consts, caught, result)
    renumbered = _renumbered(raw[2 * prologue:], params, len(keep))
    if renumbered is None:
        return None
    body = raw[:2 * prologue] + _copies(params, keep) + renumbered
    units = len(handler) // 2
    lines = positions(func, code, len(keep), units, prologue)
    if lines is None:
        return None
    table = _table(code, prologue + len(keep) * 2, len(body) // 2, units, len(keep) * 2)
    varnames = (*names[:params], *(f"{PREFIX}{i}" for i in range(len(keep))), *names[params:])
    changes: dict[str, Any] = {"co_exceptiontable": table}  # 3.11's (typed as 3.10's)
    return code.replace(co_code=body + handler, co_consts=(*code.co_consts, Exception, hook, *extra),
                        co_names=globals_ + added, co_varnames=varnames, co_nlocals=len(varnames),
                        co_linetable=lines, co_stacksize=max(code.co_stacksize, stack), **changes)


def _copies(params: int, keep: tuple[int, ...]) -> bytes:
    """The kept parameters copied at entry, each to its local (numbered after the parameters)."""
    return b"".join(bytes((_OP["LOAD_FAST"], index, _OP["STORE_FAST"], params + i)) for i, index in enumerate(keep))


@functools.lru_cache(maxsize=256)
def _handler(argcount: int, keywords: tuple[str, ...], star: int, keep: tuple[int, ...], consts: int, caught: int,
             result: int) -> tuple[bytes, int, tuple[object, ...]]:
    """The handler's bytes for a code of this shape with ``consts`` constants (``Exception``, then the hook, then
    the ones returned are put after them) and the names ``caught`` and ``result`` at these numbers; and the
    stack it needs. The same for every function of one shape: kept."""
    extra: list[object] = []

    def const(value: object) -> int:
        extra.append(value)
        return consts + 1 + len(extra)

    count = argcount + len(keywords)
    args = count if star & inspect.CO_VARARGS else None
    kwargs = count + (args is not None) if star & inspect.CO_VARKEYWORDS else None
    params = count + (args is not None) + (kwargs is not None)
    local = {index: params + i for i, index in enumerate(keep)}
    load = [("LOAD_FAST", local.get(index, index)) for index in range(argcount)]
    if args is None:
        positional = [*load, ("BUILD_TUPLE", len(load))] if load else [("LOAD_CONST", const(()))]
    else:
        positional = [*load, ("BUILD_LIST", len(load)), ("LOAD_FAST", local.get(args, args)), ("LIST_EXTEND", 1),
                      _TO_TUPLE]
    values = [("LOAD_FAST", local.get(index, index)) for index in range(argcount, count)]
    if kwargs is None and len(keywords) > 1:
        named = [*values, ("LOAD_CONST", const(keywords)), ("BUILD_CONST_KEY_MAP", len(keywords))]
    else:
        named = [step for pair in zip([("LOAD_CONST", const(k)) for k in keywords], values, strict=True)
                 for step in pair] + [("BUILD_MAP", len(keywords))]
        if kwargs is not None:
            named += [("LOAD_FAST", kwargs), ("DICT_UPDATE", 1)]
    hook = consts + 1
    # a coroutine awaits what the hook's acaught returns; a generator yields from what its result is
    awaited = [("GET_AWAITABLE", 0), ("LOAD_CONST", const(None)), ("SEND", 3), ("YIELD_VALUE", 0), ("RESUME", 3),
               ("JUMP_BACKWARD_NO_INTERRUPT", 4)] if star & inspect.CO_COROUTINE else []
    handled = _fused([("LOAD_CONST", hook), _method(caught), *positional, *named, *_call(2), *awaited, *_TEST,
                      (_IF_FALSE, 1), ("RAISE_VARARGS", 0), ("LOAD_CONST", hook), _method(result), *_call(0)])
    if star & inspect.CO_GENERATOR:
        handled += [("GET_YIELD_FROM_ITER", 0), ("LOAD_CONST", const(None)), ("SEND", 3), ("YIELD_VALUE", 0),
                    ("RESUME", 2), ("JUMP_BACKWARD_NO_INTERRUPT", 4)]
    handled += [("SWAP", 2), ("POP_EXCEPT", 0), ("RETURN_VALUE", 0)]
    steps = [("PUSH_EXC_INFO", 0), ("LOAD_CONST", consts), ("CHECK_EXC_MATCH", 0),
             (_IF_FALSE, _units(handled) + 1), ("POP_TOP", 0), *handled,
             ("RERAISE", 0), ("COPY", 3), ("POP_EXCEPT", 0), ("RERAISE", 1)]
    depth = peak = 1  # the exception, pushed where the body failed
    for name, arg in steps[:-3]:
        depth += dis.stack_effect(_OP[name], arg if _OP[name] >= dis.HAVE_ARGUMENT else None, jump=False)
        peak = max(peak, depth)
    # the cleanup holds the exception info, lasti and the exception, and copies one
    return _encode(steps), max(peak, 4), tuple(extra)


def _method(name: int) -> tuple[str, int]:
    """The hook's method ``name`` (a number in ``co_names``) loaded for a call."""
    return ("LOAD_METHOD", name) if _VERSION < (3, 12) else ("LOAD_ATTR", name << 1 | 1)


def _call(count: int) -> list[tuple[str, int]]:
    return [("PRECALL", count), ("CALL", count)] if _VERSION < (3, 12) else [("CALL", count)]


def _fused(steps: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """3.13's pairs of local loads made one instruction, as its compiler makes them (numbers under 16)."""
    if not _PAIRS:
        return steps
    out: list[tuple[str, int]] = []
    for step in steps:
        if step[0] == "LOAD_FAST" and out and out[-1][0] == "LOAD_FAST" and out[-1][1] < 16 and step[1] < 16:
            out[-1] = ("LOAD_FAST_LOAD_FAST", out[-1][1] << 4 | step[1])
        else:
            out.append(step)
    return out


def _units(steps: list[tuple[str, int]]) -> int:
    return sum(1 + _CACHES.get(name, 0) for name, _ in steps)


def _encode(steps: list[tuple[str, int]]) -> bytes:
    out = bytearray()
    for name, arg in steps:
        out += bytes((_OP[name], arg)) + bytes(2 * _CACHES.get(name, 0))
    return bytes(out)


def _referenced(raw: bytes) -> set[int]:
    """The local numbers any instruction of ``raw`` loads, stores or deletes."""
    ops = raw[0::2]
    found: set[int] = set()
    for op in _LOCALS:
        at = ops.find(op)
        while at >= 0:
            arg = raw[2 * at + 1]
            found.update((arg >> 4, arg & 15) if op in _PAIRS else (arg,))
            at = ops.find(op, at + 1)
    return found


def _renumbered(raw: bytes, params: int, shift: int) -> bytes | None:
    """``raw`` with every local numbered ``params`` or more moved up by ``shift`` (the kept copies come first);
    ``None`` where a number of a 3.13 pair would pass four bits."""
    if not shift:
        return raw
    ops, args = raw[0::2], bytearray(raw[1::2])
    for op in _LOCALS:
        at = ops.find(op)
        while at >= 0:
            if op in _PAIRS:
                high, low = args[at] >> 4, args[at] & 15
                high, low = high + shift * (high >= params), low + shift * (low >= params)
                if high > 15 or low > 15:
                    return None
                args[at] = high << 4 | low
            elif args[at] >= params:
                args[at] += shift
            at = ops.find(op, at + 1)
    out = bytearray(len(raw))
    out[0::2], out[1::2] = ops, args
    return bytes(out)


def _table(code: types.CodeType, start: int, end: int, handler: int, shift: int) -> bytes:
    """The exception table: the code's own entries (moved by ``shift`` code units, the kept copies), one to the
    handler (at ``end``) for every stretch of the body from ``start`` that none of them covers, and the
    handler's own, to its cleanup (its last three units) keeping ``lasti``."""
    out = bytearray()
    reached = start
    for begins, length, target, depth in _entries(code.co_exceptiontable):  # type: ignore[attr-defined,unused-ignore]
        first = begins + shift
        if first > reached:
            out += _entry(reached, first - reached, end, 0)
        out += _entry(first, length, target + shift, depth)
        reached = max(reached, first + length)
    if end > reached:
        out += _entry(reached, end - reached, end, 0)
    cleanup = end + handler - 3
    return bytes(out + _entry(end, cleanup - 3 - end, cleanup, 3) + _entry(cleanup - 1, 1, cleanup, 3))


@functools.lru_cache(maxsize=1024)
def _entry(*values: int) -> bytes:
    """One entry of an exception table: each value in 6-bit groups, the first first, 64 on all but the last;
    128 on the entry's first byte."""
    out = bytearray()
    for each in values:
        value, groups = each, [each & 63]
        while value >= 64:
            value >>= 6
            groups.append(value & 63)
        out += bytes([64 | g for g in reversed(groups[1:])] + groups[:1])
    out[0] |= 128
    return bytes(out)


def _entries(table: bytes) -> list[tuple[int, int, int, int]]:
    """An exception table's entries: start, length and target in code units, then depth and ``lasti``."""
    values: list[int] = []
    at = 0
    while at < len(table):
        byte = table[at]
        value = byte & 63
        while byte & 64:
            at += 1
            byte = table[at]
            value = (value << 6) | (byte & 63)
        values.append(value)
        at += 1
    return [(values[i], values[i + 1], values[i + 2], values[i + 3]) for i in range(0, len(values), 4)]
