"""Writing a proven fix back to the source file: backed up, re-parsed, and replaced atomically.

This is the simple safe write-back: it refuses when the definition in the file is no longer the
one that was read, never leaves a half-written file, and keeps a backup beside the original.
"""

from __future__ import annotations

import ast
import os
import shutil
import tempfile
import textwrap
from pathlib import Path

from ._candidate import file_text_with
from ._errors import RegrowError
from ._target import Target


class WriteBackError(RegrowError):
    """The fix could not be written back; the file is as it was."""


def write_back(target: Target, source: str) -> Path:
    """Replace the target's definition in its file with ``source``; returns the backup's path."""
    path = Path(target.filename)
    try:
        before, after = file_text_with(target, source)
    except OSError as exc:
        raise WriteBackError(f"cannot read {path}: {exc}") from exc
    start = target.lineno - 1
    current = "".join(before.splitlines(keepends=True)[start : start + len(target.source.splitlines())])
    if textwrap.dedent(current) != target.source:
        raise WriteBackError(f"{path} changed since {target.qualname} was read; not writing over it")
    try:
        ast.parse(after, filename=str(path))
    except SyntaxError as exc:
        raise WriteBackError(f"the patched {path} would not parse ({exc.msg}, line {exc.lineno}); not written") from exc
    backup = _free_name(path.with_name(path.name + ".regrow-backup"))
    shutil.copy2(path, backup)
    _atomic_write(path, after)
    return backup


def _free_name(path: Path) -> Path:
    candidate, n = path, 1
    while candidate.exists():
        candidate = path.with_name(f"{path.name}.{n}")
        n += 1
    return candidate


def _atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path`` and rename it over ``path``."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".regrow-tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        shutil.copymode(path, tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
