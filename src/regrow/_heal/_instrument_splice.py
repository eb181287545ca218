"""The instrumented code made from the running bytecode alone, on Python 3.11-3.13: no source read, no compile.

What :mod:`._instrument_code` compiles from the definition's text — the body inside ``try``/``except
Exception`` whose handler calls the hook — is, on 3.11+, the running code's bytes with a handler after
them, one more entry in the exception table for every stretch of the body no ``try`` of its own covers,
and the handler's positions after the body's. This module writes exactly that: the handler's
instructions, their inline caches, the constants and names they use, the stack they need, the entries
and the positions, with the parameters kept at entry (where the body rebinds them) copied to locals of
their own. ``tests/heal/test_instrument_splice.py`` compares what it makes with what the compiler makes
from the text, function by function, on the standard library.

It applies to functions, generators and coroutines (methods that call ``super()`` and closures over
parameters or locals included; a parameter a closure holds is read from its cell at entry) with no
more than 255 locals to renumber; a ``**kwargs`` the body uses other than spread into a call is copied at entry, as the
compiled text copies it. A generator's handler yields from the hook's result and a coroutine's awaits its
``acaught``; on 3.12+ their code ends with a StopIteration handler of its own (the epilogue), which stays
last, after the hook's, and takes what it took in the compiled text. Each yield of the body keeps the
depth of ``try`` blocks it says it stands in (3.12: ``YIELD_VALUE``'s argument; 3.13: a bit of the
``RESUME`` after it), one less than the compiled text's: ``close()`` then finishes such a generator
without throwing ``GeneratorExit`` in, which the hook's handler would only have raised on. For anything
else (async generators, more than 16 parameters) :func:`spliced` gives ``None`` and the
text is compiled as before. The ``def`` line, where the handler stands, is read from the source when there
is one (else the code's first line).
"""

from __future__ import annotations

import dis
import functools
import inspect
import opcode
import sys
import types
from typing import Any

from ._instrument_bytes import EPILOGUE, LOCALS, PREFIX
from ._instrument_lines import positions

_OP = dis.opmap
_VERSION = sys.version_info[:2]
APPLIES = (3, 11) <= _VERSION <= (3, 13)
_ODD = inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE
# A generator or coroutine begins RETURN_GENERATOR, POP_TOP, RESUME; 3.12+ ends it with a handler that makes a
# StopIteration raised inside a RuntimeError (the epilogue), which stays last, after the hook's handler.
_SUSPENDS = inspect.CO_GENERATOR | inspect.CO_COROUTINE
_STARTS = bytes((_OP["RETURN_GENERATOR"], 0, _OP["POP_TOP"], 0)) if APPLIES else b""  # a generator's, before RESUME
# what may come before the RESUME: the closure's cells made and its free variables copied, a generator made
_BEFORE = {_OP[name] for name in ("COPY_FREE_VARS", "MAKE_CELL", "RETURN_GENERATOR", "POP_TOP") if name in _OP}
_MANY = 16  # more parameters than this: the compiler builds the tuple another way; left to it
# the locals' instructions, and those whose argument numbers a cell or free variable: after the locals, so moved too
_RENUMBERED = tuple({*LOCALS, *(op for op in dis.hasfree if op < 256)})
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


_CACHES = {name: _inline(name) for name in ("LOAD_METHOD", "LOAD_ATTR", "PRECALL", "CALL", "TO_BOOL", "SEND",
                                            _IF_FALSE) if name in _OP}


def spliced(func: types.FunctionType, code: types.CodeType, hook: object, kept: set[int]) -> types.CodeType | None:
    """``code`` with its body inside a ``try`` whose handler calls ``hook`` (``kept``: the numbers of the
    locals the body stores to), or ``None`` where this does not apply."""
    if not APPLIES or code.co_flags & _ODD:
        return None
    raw = code.co_code
    suspends = code.co_flags & _SUSPENDS
    prologue = raw[0::2].find(_OP["RESUME"]) + 1  # the code units up to the first RESUME, which it ends
    if prologue <= 0 or any(op not in _BEFORE for op in raw[:2 * prologue - 2:2]):
        return None
    if bool(suspends) != (raw[2 * prologue - 6:2 * prologue - 2] == _STARTS):
        return None
    epilogue = EPILOGUE if suspends else b""
    if not raw.endswith(epilogue):
        return None
    raw = raw[:len(raw) - len(epilogue)]
    names, flags = code.co_varnames, code.co_flags
    if any(name.startswith(PREFIX) for name in (*names, *code.co_names)):
        return None
    params = code.co_argcount + code.co_kwonlyargcount + bool(flags & inspect.CO_VARARGS)
    copied = -1  # a **kwargs the body reads or changes: a copy of the dict is kept at entry
    if flags & inspect.CO_VARKEYWORDS:
        if names[params] in code.co_cellvars:
            return None  # a **kwargs a closure holds
        copied = params if _read(raw, params) else -1
        params += 1
    # a parameter a closure holds is read from its cell at entry (the body or the closure may change it after)
    cells = {index for index in range(params) if names[index] in code.co_cellvars}
    keep = tuple(index for index in range(params) if index in kept or index in cells or index == copied)
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
    handler, stack, extra, yielded = _handler(code.co_argcount, keywords, star, keep, consts, caught, result)
    renumbered = _renumbered(raw, params, len(keep))
    if renumbered is None:
        return None
    copies = _copies(params, keep, cells, copied)
    body = renumbered[:2 * prologue] + copies + renumbered[2 * prologue:]
    units, shift = len(handler) // 2, len(copies) // 2
    lines = positions(func, code, shift, units, prologue, len(epilogue) // 2)
    if lines is None:
        return None
    table = _table(code, prologue + shift, len(body) // 2, units, shift,
                   (len(raw) // 2, yielded, prologue) if epilogue else None)
    varnames = (*names[:params], *(f"{PREFIX}{i}" for i in range(len(keep))), *names[params:])
    changes: dict[str, Any] = {"co_exceptiontable": table}  # 3.11's (typed as 3.10's)
    return code.replace(co_code=body + handler + epilogue, co_consts=(*code.co_consts, Exception, hook, *extra),
                        co_names=globals_ + added, co_varnames=varnames, co_nlocals=len(varnames),
                        co_linetable=lines, co_stacksize=max(code.co_stacksize, stack, 2), **changes)


def _copies(params: int, keep: tuple[int, ...], cells: set[int], copied: int) -> bytes:
    """The kept parameters copied at entry, each to its local (numbered after the parameters); a parameter in
    ``cells`` read from its cell; the ``copied`` one (a ``**kwargs``) a new dict of its items."""
    out = bytearray()
    for i, index in enumerate(keep):
        if index == copied:
            out += bytes((_OP["BUILD_MAP"], 0, _OP["LOAD_FAST"], index, _OP["DICT_UPDATE"], 1))
        else:
            out += bytes((_OP["LOAD_DEREF" if index in cells else "LOAD_FAST"], index))
        out += bytes((_OP["STORE_FAST"], params + i))
    return bytes(out)


@functools.lru_cache(maxsize=256)
def _handler(argcount: int, keywords: tuple[str, ...], star: int, keep: tuple[int, ...], consts: int, caught: int,
             result: int) -> tuple[bytes, int, tuple[object, ...], int]:
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
    if len(keywords) > 1:
        named = [*values, ("LOAD_CONST", const(keywords)), ("BUILD_CONST_KEY_MAP", len(keywords))]
    else:
        named = [step for pair in zip([("LOAD_CONST", const(k)) for k in keywords], values, strict=True)
                 for step in pair] + [("BUILD_MAP", len(keywords))]
    if kwargs is not None:
        named += [("LOAD_FAST", local.get(kwargs, kwargs)), ("DICT_UPDATE", 1)]
    hook = consts + 1
    # a coroutine awaits what the hook's acaught returns; a generator yields from what its result is
    awaited = [("GET_AWAITABLE", 0), ("LOAD_CONST", const(None)), *_sent(3)] if star & inspect.CO_COROUTINE else []
    handled = _fused([("LOAD_CONST", hook), _method(caught), *positional, *named, *_call(2), *awaited, *_TEST,
                      (_IF_FALSE, 1), ("RAISE_VARARGS", 0), ("LOAD_CONST", hook), _method(result), *_call(0)])
    if star & inspect.CO_GENERATOR:
        handled += [("GET_YIELD_FROM_ITER", 0), ("LOAD_CONST", const(None)), *_sent(2)]
    handled += [("SWAP", 2), ("POP_EXCEPT", 0), ("RETURN_VALUE", 0)]
    steps = [("PUSH_EXC_INFO", 0), ("LOAD_CONST", consts), ("CHECK_EXC_MATCH", 0),
             (_IF_FALSE, _units(handled) + 1), ("POP_TOP", 0), *handled,
             ("RERAISE", 0), ("COPY", 3), ("POP_EXCEPT", 0), ("RERAISE", 1)]
    depth = peak = 1  # the exception, pushed where the body failed
    for name, arg in steps[:-3]:
        if name != "CLEANUP_THROW":  # reached only when something is thrown in at the yield, at a depth of 3
            depth += dis.stack_effect(_OP[name], arg if _OP[name] >= dis.HAVE_ARGUMENT else None, jump=False)
        peak = max(peak, depth)
    names = [name for name, _ in steps]
    yielded = _units(steps[:names.index("YIELD_VALUE")]) if "YIELD_VALUE" in names else -1
    # the cleanup holds the exception info, lasti and the exception, and copies one
    return _encode(steps), max(peak, 4), tuple(extra), yielded


def _sent(resumed: int) -> list[tuple[str, int]]:
    """The loop that sends into what is awaited or yielded from, up to its value (``resumed``: 3 after an await,
    2 after a yield from); 3.12+ throws in what the caller throws (CLEANUP_THROW), after the loop."""
    if _VERSION < (3, 12):
        return [("SEND", 3), ("YIELD_VALUE", 0), ("RESUME", resumed), ("JUMP_BACKWARD_NO_INTERRUPT", 4)]
    depth = 3 if _VERSION == (3, 12) else 1  # 3.12: the try blocks around it; 3.13: 1, inside an await or yield from
    return [("SEND", 4), ("YIELD_VALUE", depth), ("RESUME", resumed), ("JUMP_BACKWARD_NO_INTERRUPT", 5),
            ("CLEANUP_THROW", 0), ("END_SEND", 0)]


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


def _read(raw: bytes, local: int) -> bool:
    """Whether ``raw`` uses the local ``local`` other than spread into a call (``f(**kwargs)``: loaded, then
    merged into the call's keywords), as the compiled text tells whether to copy a ``**kwargs`` at entry."""
    ops = raw[0::2]
    for op in LOCALS:
        at = ops.find(op)
        while at >= 0:
            arg = raw[2 * at + 1]
            if local in ((arg >> 4, arg & 15) if op in _PAIRS else (arg,)) and \
                    not (op == _OP["LOAD_FAST"] and ops[at + 1:at + 2] == bytes((_OP["DICT_MERGE"],))):
                return True
            at = ops.find(op, at + 1)
    return False


def _renumbered(raw: bytes, params: int, shift: int) -> bytes | None:
    """``raw`` with every local numbered ``params`` or more moved up by ``shift`` (the kept copies come first);
    ``None`` where a number would pass its byte (or a 3.13 pair's four bits), or stands past a byte already
    (an ``EXTENDED_ARG`` before it)."""
    if not shift:
        return raw
    ops, args = raw[0::2], bytearray(raw[1::2])
    extended = _OP["EXTENDED_ARG"]
    for op in _RENUMBERED:
        at = ops.find(op)
        while at >= 0:
            if at and ops[at - 1] == extended:
                return None  # a number past a byte: its low byte alone cannot tell
            if op in _PAIRS:
                high, low = args[at] >> 4, args[at] & 15
                high, low = high + shift * (high >= params), low + shift * (low >= params)
                if high > 15 or low > 15:
                    return None
                args[at] = high << 4 | low
            elif args[at] >= params:
                if args[at] + shift > 255:
                    return None
                args[at] += shift
            at = ops.find(op, at + 1)
    out = bytearray(len(raw))
    out[0::2], out[1::2] = ops, args
    return bytes(out)


def _table(code: types.CodeType, start: int, end: int, handler: int, shift: int,
           epilogue: tuple[int, int, int] | None) -> bytes:
    """The exception table: the code's own entries (moved by ``shift`` code units, the kept copies), one to the
    handler (at ``end``) for every stretch of the body from ``start`` that none of them covers, and the
    handler's own, to its cleanup (its last three units) keeping ``lasti``.

    ``epilogue`` (3.12+, a generator or coroutine): where the code's StopIteration handler stood, where in
    the hook's handler its yield stands, and the prologue's length (its last unit the RESUME). What that
    handler covered of the body is the hook's now; the entry (RESUME, the copies), the handler's own end and
    its cleanup go to it, after the hook's handler."""
    out = bytearray()
    reached = start
    last = end + handler  # the StopIteration handler, moved
    if epilogue is not None:
        out += _entry(epilogue[2] - 1, start - epilogue[2] + 1, last, 1)
    for begins, length, target, depth in _entries(code.co_exceptiontable):  # type: ignore[attr-defined,unused-ignore]
        if epilogue is not None and target == epilogue[0]:
            continue  # the body's, unless a try of its own covers it: the hook's, as a gap
        first = begins + shift
        if first < start:
            continue
        if first > reached:
            out += _entry(reached, first - reached, end, 0)
        out += _entry(first, length, target + shift, depth)
        reached = max(reached, first + length)
    if end > reached:
        out += _entry(reached, end - reached, end, 0)
    cleanup = end + handler - 3
    if epilogue is None:
        return bytes(out + _entry(end, cleanup - 3 - end, cleanup, 3) + _entry(cleanup - 1, 1, cleanup, 3))
    yielded = end + epilogue[1]  # the yield of the send loop: what is thrown in there goes to its CLEANUP_THROW
    return bytes(out + _entry(end, yielded - end, cleanup, 3) + _entry(yielded, 1, yielded + 3, 6) +
                 _entry(yielded + 1, cleanup - 3 - yielded - 1, cleanup, 3) + _entry(cleanup - 3, 2, last, 1) +
                 _entry(cleanup - 1, 1, cleanup, 3) + _entry(cleanup, 3, last, 1))


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
