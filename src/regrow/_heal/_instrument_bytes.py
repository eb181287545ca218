"""What the bytes of a running function say to its instrumentation: which parameters it rebinds, and whether
code compiled from its text is that function (hooked or not).

Kept apart from the building (:mod:`._instrument_code`): these read bytecode, that one reads source.
"""

from __future__ import annotations

import dis
import inspect
import sys
import types

PREFIX = "_regrow_p"  # the locals that keep rebound parameters as they entered
GENERATORS = inspect.CO_GENERATOR | inspect.CO_ASYNC_GENERATOR
_STORES = {dis.opmap.get(name, 256) for name in ("STORE_FAST", "DELETE_FAST", "LOAD_FAST_AND_CLEAR")} - {256}
_STORE_PAIRS = {dis.opmap.get(name, 256) for name in ("STORE_FAST_STORE_FAST", "STORE_FAST_LOAD_FAST")} - {256}
_EXTENDED_ARG = dis.opmap["EXTENDED_ARG"]
_LOAD_FAST, _STORE_FAST = dis.opmap["LOAD_FAST"], dis.opmap["STORE_FAST"]
LOCALS = frozenset(op for op in dis.haslocal if op < 256)  # 3.12+ lists pseudo-instructions too
_RESUME, _YIELD = dis.opmap.get("RESUME", -1), dis.opmap["YIELD_VALUE"]
EPILOGUE = bytes((dis.opmap["CALL_INTRINSIC_1"], 3, dis.opmap["RERAISE"], 1)) if "CALL_INTRINSIC_1" in dis.opmap \
    else b""  # 3.12+: INTRINSIC_STOPITERATION_ERROR, then RERAISE


def same_code(plain: types.CodeType, code: types.CodeType) -> bool:
    """Whether ``plain`` (compiled from the text) is the running ``code``."""
    return len(plain.co_code) == len(code.co_code) and len(plain.co_consts) == len(code.co_consts) and \
        same_body(plain, code)


def same_body(made: types.CodeType, code: types.CodeType) -> bool:
    """Whether ``made`` begins with ``code``: the same parameters, bytes, names, locals and constants (then the
    handler). A fix is compiled nested in a scope: ``CO_NESTED`` may differ."""
    body = body_of(code)
    return resumed(made.co_code[:len(body)], code) == resumed(body, code) and same_shape(made, code)


def plain(code: types.CodeType) -> bool:
    """Whether :func:`same_kept` can tell for ``code``: a plain function (no cells, generator, coroutine or
    ``**kwargs``) on 3.11 or 3.12 (3.13 fuses a copy's store with the body's first load; 3.10 jumps absolutely)."""
    odd = GENERATORS | inspect.CO_COROUTINE | inspect.CO_VARKEYWORDS
    return (3, 11) <= sys.version_info < (3, 13) and not (code.co_cellvars or code.co_freevars or code.co_flags & odd)


def same_kept(made: types.CodeType, code: types.CodeType) -> bool:
    """Whether ``made``, which keeps parameters at entry, is ``code`` hooked: after its ``RESUME``, the copies
    (``LOAD_FAST`` a parameter, ``STORE_FAST`` a kept local), then ``code``'s bytes after its own ``RESUME``, each
    local the same name (the kept locals shift the numbers of those after them); ``False`` when it cannot tell."""
    if not plain(code) or not same_shape(made, code, kept=True) or made.co_code[:2] != code.co_code[:2]:
        return False
    ours, theirs = made.co_code, code.co_code
    at = 2
    while at + 4 <= len(ours) and ours[at] == _LOAD_FAST and ours[at + 2] == _STORE_FAST and \
            made.co_varnames[ours[at + 3]].startswith(PREFIX):
        at += 4
    body = ours[at:at + len(theirs) - 2]
    ops, args, their = body[0::2], bytearray(body[1::2]), theirs[3::2]
    if ops != theirs[2::2] or at == 2 or _EXTENDED_ARG in ops:  # the same operations; no number over a byte
        return False
    for op in LOCALS:  # each local's name compared, then its number taken as code's: the rest compared at once
        index = ops.find(op)
        while index >= 0:
            if made.co_varnames[args[index]] != code.co_varnames[their[index]]:
                return False
            args[index] = their[index]
            index = ops.find(op, index + 1)
    return args == their


def body_of(code: types.CodeType) -> bytes:
    """``code``'s bytes but for the epilogue 3.12+ ends a generator or coroutine with (the StopIteration it raises
    made a RuntimeError), which in the instrumented code comes after the handler."""
    raw = code.co_code
    return raw[:-len(EPILOGUE)] if EPILOGUE and raw.endswith(EPILOGUE) else raw


def resumed(raw: bytes, code: types.CodeType) -> bytes:
    """``raw`` without what a generator's ``yield`` says of the ``try`` blocks around it (3.12: ``YIELD_VALUE``'s
    argument; 3.13: a bit of the ``RESUME`` after it; so that closing need not throw in where none is): in the
    instrumented code one more stands around every ``yield``."""
    if sys.version_info < (3, 12) or not code.co_flags & GENERATORS:
        return raw
    units = bytearray(raw)
    for at in range(0, len(units), 2):
        if units[at] == _RESUME:
            units[at + 1] &= 3
        elif units[at] == _YIELD:
            units[at + 1] = 0
    return bytes(units)


def same_shape(made: types.CodeType, code: types.CodeType, kept: bool = False) -> bool:
    """:func:`same_body` but for the bytes (which parameters ``kept`` at entry shift, with the locals that
    keep them)."""
    shape = ("co_argcount", "co_posonlyargcount", "co_kwonlyargcount", "co_freevars", "co_cellvars")
    local = tuple(n for n in made.co_varnames if not n.startswith(PREFIX)) if kept else made.co_varnames
    return all(getattr(made, a) == getattr(code, a) for a in shape) and \
        (made.co_flags ^ code.co_flags) & ~inspect.CO_NESTED == 0 and \
        made.co_names[:len(code.co_names)] == code.co_names and \
        local[:len(code.co_varnames)] == code.co_varnames and \
        all(type(a) is type(b) and (a.co_code == b.co_code if isinstance(a, types.CodeType) else a == b)
            for a, b in zip(code.co_consts, made.co_consts, strict=False))


def keeps(code: types.CodeType) -> bool:
    """Whether the instrumented code may keep parameters at entry (its body then starts later)."""
    params = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & inspect.CO_VARARGS)
    return bool(code.co_flags & inspect.CO_VARKEYWORDS or code.co_cellvars or
                any(index < params for index in stored(code)))


def stored(code: types.CodeType) -> set[int]:
    """The local variable numbers the code stores to or deletes (so a parameter among them is rebound).

    The stores are found by ``bytes.find`` over the opcodes (a loop in Python over every instruction cost as much
    as a compile's fifth); an ``EXTENDED_ARG`` run just before one gives its argument's high bytes."""
    raw = code.co_code
    ops = raw[0::2]
    found: set[int] = set()
    for op in (*_STORES, *_STORE_PAIRS):
        at = ops.find(op)
        while at >= 0:
            arg, before, shift = raw[2 * at + 1], at - 1, 8
            while before >= 0 and ops[before] == _EXTENDED_ARG:
                arg |= raw[2 * before + 1] << shift
                before, shift = before - 1, shift + 8
            if op in _STORES:
                found.add(arg)
            else:
                found.update((arg >> 4, arg & 15))  # 3.13's pairs: conservative, both halves
            at = ops.find(op, at + 1)
    return found
