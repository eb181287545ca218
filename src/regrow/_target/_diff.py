"""A candidate's source in the target's file: the file as it would be, and the unified diff of it."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._target import Target


def file_text_with(target: Target, source: str) -> tuple[str, str]:
    """The target's file as it is, and as it would be with ``source`` in place of the definition."""
    path = Path(target.filename)
    before = path.read_text(encoding="utf-8")
    lines = before.splitlines(keepends=True)
    start = target.lineno - 1
    end = start + len(target.source.splitlines())
    after = "".join([*lines[:start], target.as_file_text(source), *lines[end:]])
    return before, after


def unified_diff(target: Target, source: str) -> str:
    """A unified diff of the target's file, as ``patch -p0`` and ``git apply`` read it."""
    try:
        before, after = file_text_with(target, source)
        name = target.filename
    except OSError:  # no file to diff against: diff the definitions alone
        before, after, name = target.source, target.as_file_text(source), f"{target.module}.{target.qualname}"
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{_rel(name)}", f"b/{_rel(name)}"
        )
    )


def _rel(name: str) -> str:
    try:
        return str(Path(name).resolve().relative_to(Path.cwd()))
    except ValueError:
        return name.lstrip("/")
