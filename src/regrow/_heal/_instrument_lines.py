"""The line table of code the splice makes (:mod:`._instrument_splice`): the running code's, with the kept
parameters' copies on the body's first line and the handler on the ``def`` line.

3.11+ keeps a code's positions as entries of one to eight code units each: a header byte (its kind and
length), then the line's distance from the last entry's line and the columns, in numbers of six bits a
byte (``Objects/locations.md`` in CPython). Only the entries the copies stand before are read and written
again; the rest of the table is kept byte for byte.
"""

from __future__ import annotations

import functools
import types

from .._target._fixed import source_lines


def positions(func: types.FunctionType, code: types.CodeType, copies: int, handler: int, prologue: int,
              epilogue: int) -> bytes | None:
    """The line table: the code's, with the ``copies`` units on the body's first line (after the ``prologue``'s
    code units), the handler on the ``def`` line and the code's last ``epilogue`` units (3.12+: a generator's
    StopIteration handler, which stands nowhere) after it; ``None`` where the table is not as expected."""
    table = code.co_linetable
    ending = b""
    if epilogue:
        header = table[-1]  # the last entry, if it stands nowhere: one byte
        length = (header & 7) + 1
        nowhere = (None, None, None, None)
        places = list(code.co_positions())[-epilogue:]  # type: ignore[attr-defined,unused-ignore]
        if header & 0xF8 != 0xF8 or length < epilogue or any(place != nowhere for place in places):
            return None
        table = table[:-1] + (bytes((0xF8 | (length - epilogue - 1),)) if length > epilogue else b"")
        ending = _NOWHERE[epilogue]
    if copies:
        first = units = 0
        while units < prologue and first < len(table):
            units += (table[first] & 7) + 1
            first += _entry_size(table, first)
        if units != prologue or first >= len(table) or (second := _moved(table, first)) is None:
            return None  # the prologue's entries alone first, then the body's first instruction
        delta, column, rest = second
        table = table[:first] + _long(copies, delta, column, column) + rest
    last = next((line for _, _, line in reversed(list(code.co_lines())) if line is not None), code.co_firstlineno)
    defined, column = _definition(func, code)
    # PUSH_EXC_INFO and the cleanup (the last three units) stand nowhere, as the compiler puts them
    return table + _NOWHERE[1] + _long(handler - 4, defined - last, column, column + 3) + _NOWHERE[3] + ending


def _definition(func: types.FunctionType, code: types.CodeType) -> tuple[int, int]:
    """The ``def`` line (below the decorators) and its column, as far as the source tells."""
    lines = source_lines(code, func.__globals__)
    for number in range(code.co_firstlineno - 1, min(len(lines), code.co_firstlineno + 63)):
        text = lines[number]
        stripped = text.lstrip()
        if stripped.startswith(("def ", "async def ")):
            return number + 1, len(text) - len(stripped)
    return code.co_firstlineno, 0


def _entry_size(table: bytes, at: int) -> int:
    """The bytes of the line-table entry at ``at``."""
    kind = (table[at] >> 3) & 15
    if kind == 15:
        return 1
    varints = 4 if kind == 14 else 1 if kind == 13 else 0
    end = at + 1
    for _ in range(varints):
        while table[end] & 64:
            end += 1
        end += 1
    return end - at + (2 if 10 <= kind <= 12 else 1 if kind < 10 else 0)


def _moved(table: bytes, at: int) -> tuple[int, int, bytes] | None:
    """The entry at ``at`` (the body's first, after the RESUME's) read — its line delta and column — and the
    table from it on, that entry written with no line delta of its own (the copies before it stand on its
    line)."""
    header = table[at]
    kind = (header >> 3) & 15
    size = _entry_size(table, at)
    if kind == 15:
        return None
    tail = table[at + size:]
    if kind == 13:  # a line and no columns (-X no_debug_ranges)
        delta, _ = _svarint(table, at + 1)
        return delta, -1, bytes((header,)) + _varint(0) + tail
    if kind < 10:
        return 0, (kind << 3) | (table[at + 1] >> 4), table[at:]
    if kind <= 12:
        return kind - 10, table[at + 1], bytes((header & ~(15 << 3) | (10 << 3),)) + table[at + 1:at + 3] + tail
    delta, end = _svarint(table, at + 1)
    lines, end = _uvarint(table, end)
    column, end = _uvarint(table, end)
    last, end = _uvarint(table, end)
    if column == 0:
        return None  # no column
    return delta, column - 1, bytes((header,)) + _varint(0) + _varint(lines) + _varint(column) + _varint(last) + tail


@functools.lru_cache(maxsize=256)
def _long(units: int, delta: int, column: int, end: int) -> bytes:
    """Entries for ``units`` code units at one position (long form; a line alone where ``column`` is -1):
    ``delta`` lines after the last entry."""
    out = bytearray()
    while units > 0:
        size = min(units, 8)
        line = _varint(delta << 1 if delta >= 0 else (-delta << 1) | 1)
        if column < 0:
            out += bytes((0x80 | (13 << 3) | (size - 1),)) + line
        else:
            out += bytes((0x80 | (14 << 3) | (size - 1),)) + line + _varint(0) + _varint(column + 1) + \
                _varint(end + 1)
        units, delta = units - size, 0
    return bytes(out)


def _uvarint(table: bytes, at: int) -> tuple[int, int]:
    """The number written at ``at`` in a line table (six bits a byte, the lowest first), and where it ends."""
    value, shift = 0, 0
    while True:
        byte = table[at]
        value |= (byte & 63) << shift
        shift, at = shift + 6, at + 1
        if not byte & 64:
            return value, at


def _svarint(table: bytes, at: int) -> tuple[int, int]:
    """The signed number written at ``at`` in a line table (its sign in the lowest bit), and where it ends."""
    value, at = _uvarint(table, at)
    return (-(value >> 1) if value & 1 else value >> 1), at


_NOWHERE = {units: bytes((0x80 | (15 << 3) | (units - 1),)) for units in (1, 2, 3)}


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 64:
        out.append(64 | (value & 63))
        value >>= 6
    out.append(value)
    return bytes(out)
