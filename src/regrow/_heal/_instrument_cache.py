"""The instrumented code kept across processes, as Python keeps bytecode: ``__pycache__``, ``marshal``.

Building the instrumented code (:mod:`._instrument_code`) parses and compiles the definition: most of
what ``@heal`` costs at import. What it builds depends only on the module's text, the running code and
the instrumentation itself, so it is kept beside the module's own bytecode, one file per module
(``__pycache__/<module>.regrow-<cache tag>.pyc``, under ``sys.pycache_prefix`` when that is set), and
read back at the next import.

The file begins with the interpreter's magic number and a digest of what every entry depends on: the
module's text and file, regrow's version and the instrumentation's own source; a file whose header
differs is replaced at the first function built. Then come the entries, appended as functions are
built (creating a file costs ten appends): each is its length, its key — that digest with the
function's name, first line, flags and bytecode — and the marshalled code. An entry whose key is not
the function's is not used; a file cut short ends at its last whole entry; code that does not load,
or does not fit the running code (checked by the caller), is a miss.

Nothing here ever fails an import: a folder that cannot be written, ``sys.dont_write_bytecode``
(``PYTHONDONTWRITEBYTECODE``), a file that cannot be read — the code is compiled as if there were no
cache. A new file is written whole under a temporary name and renamed into place; an entry is one
``write`` in append mode. Like a ``.pyc``, the file is trusted as much as the folder it is in: whoever
can write there can already replace the module's own bytecode.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import linecache
import marshal
import os
import sys
import types
from pathlib import Path

from .._version import __version__

FORMAT = b"regrow-instrument-2"  # bumped when the file's layout changes
_MAGIC = importlib.util.MAGIC_NUMBER
_HEADER = len(_MAGIC) + 32
_ENTRY = 4 + 32  # the entry's length, its key


class _Module:
    """One module file's cache: its entries read once, and whether new ones are appended or start a file."""

    __slots__ = ("entries", "header", "lines", "path", "started")

    def __init__(self, path: str, lines: list[str], header: bytes) -> None:
        self.path, self.lines, self.header = path, lines, header
        self.entries: dict[bytes, bytes] = {}
        self.started = False  # the file on disk has this header: entries are appended to it
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            return
        if data[:_HEADER] != header:
            return
        at = _HEADER
        while at + _ENTRY <= len(data):
            size = int.from_bytes(data[at:at + 4], "little")
            end = at + _ENTRY + size
            if end > len(data):
                break  # cut short (a write that did not finish): the entries before it stand
            self.entries[data[at + 4:at + _ENTRY]] = data[at + _ENTRY:end]  # a later entry of a key wins
            at = end
        self.started = at == len(data)  # else what is appended would be read as the end of the broken entry


_modules: dict[str, _Module] = {}  # module file -> its cache, while linecache holds the same lines


def load(code: types.CodeType, globals_: dict[str, object]) -> types.CodeType | None:
    """The instrumented code kept for ``code``, or ``None`` (none kept, another key, unreadable)."""
    try:
        found = _module(code, globals_)
        if found is None:
            return None
        key = _key(found, code)
        data = found.entries.get(key)
        if data is None:
            return None
        try:
            made = marshal.loads(data)
        except Exception:
            made = None
        if not isinstance(made, types.CodeType):
            del found.entries[key]  # damaged: the file is written again, whole, at the next function built
            found.started = False
            return None
    except Exception:  # a cache must never fail an import: anything wrong is a miss
        return None
    return made


def keep(code: types.CodeType, globals_: dict[str, object], made: types.CodeType) -> None:
    """Keep ``made`` (the code instrumented from ``code``, placeholders in place) for the next import."""
    if sys.dont_write_bytecode:
        return
    temporary = None
    try:
        found = _module(code, globals_)
        if found is None:
            return
        key = _key(found, code)
        found.entries[key] = marshal.dumps(made)
        if found.started:
            descriptor = os.open(found.path, os.O_WRONLY | os.O_APPEND)
            try:
                os.write(descriptor, _entry(key, found.entries[key]))
            finally:
                os.close(descriptor)
            return
        os.makedirs(os.path.dirname(found.path), exist_ok=True)
        temporary = f"{found.path}.{os.getpid()}.tmp"
        with open(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666), "wb") as handle:
            handle.write(found.header + b"".join(_entry(k, data) for k, data in found.entries.items()))
        os.replace(temporary, found.path)
        temporary = None
        found.started = True
    except Exception:  # read-only folder, full disk, a guard refusing the write: compiled next time
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)


def _entry(key: bytes, data: bytes) -> bytes:
    return len(data).to_bytes(4, "little") + key + data


def path_of(code: types.CodeType) -> str | None:
    """Where the instrumented code of ``code``'s module is kept (``None``: not a module file)."""
    filename = code.co_filename
    if not filename.endswith(".py") or not os.path.isabs(filename):
        return None
    try:
        pyc = importlib.util.cache_from_source(filename)
    except (NotImplementedError, ValueError):  # no cache tag: this interpreter keeps no bytecode
        return None
    stem = os.path.basename(filename)[:-3]
    return os.path.join(os.path.dirname(pyc), f"{stem}.regrow-{sys.implementation.cache_tag}.pyc")


def _module(code: types.CodeType, globals_: dict[str, object]) -> _Module | None:
    """The cache of ``code``'s module (read at the first of its functions)."""
    filename = code.co_filename
    lines = linecache.getlines(filename, globals_)
    found = _modules.get(filename)
    if found is not None and found.lines is lines:
        return found
    path = path_of(code)
    if path is None or not lines:
        return None
    text = hashlib.sha256("".join(lines).encode("utf-8", "surrogatepass")).digest()
    header = _MAGIC + hashlib.sha256(b"\0".join((FORMAT, __version__.encode(), _instrumentation(), text,
                                                  filename.encode("utf-8", "surrogatepass")))).digest()
    found = _modules[filename] = _Module(path, lines, header)
    return found


def _key(module: _Module, code: types.CodeType) -> bytes:
    """The key of ``code``'s entry: the module's header (its text, regrow, the interpreter) and the code itself."""
    qualname: str = getattr(code, "co_qualname", code.co_name)  # 3.10 has no co_qualname
    return hashlib.sha256(b"\0".join((module.header, qualname.encode(),
                                      str((code.co_firstlineno, code.co_flags)).encode(), code.co_code))).digest()


@functools.cache
def _instrumentation() -> bytes:
    """A digest of the code that builds instrumented code: a change to it (without a new version) is a miss."""
    digest = hashlib.sha256()
    for name in ("_instrument_code.py", "_instrument_bytes.py", "_instrument_cache.py"):
        try:
            digest.update(Path(__file__).with_name(name).read_bytes())
        except OSError:  # installed without its source (a zip, a frozen app): the version alone
            digest.update(name.encode())
    return digest.digest()
