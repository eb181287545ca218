"""A candidate's source in the target's file: the file as it would be, and the unified diff of it.

The file's text is made as write-back makes it (:mod:`._rewrite`): the definition is found in the file as
it is now, and must still read as it did when the function was loaded. A file edited since (lines added
above the function, say) gets a diff of the lines the fix really replaces; a file whose definition itself
changed, or that cannot be read, gets a diff of the definitions alone (what the fix was made from, and
the fix), never the file's new lines shown as what the fix replaces.
"""

from __future__ import annotations

import codecs
import difflib
from pathlib import Path
from typing import TYPE_CHECKING

from ._rewrite import Edit, RewriteError, encoding_of, rewrite

if TYPE_CHECKING:
    from ._target import Target


def edit_of(target: Target, source: str, expected: str | None = None) -> Edit:
    """The edit that puts ``source`` (a bare definition) in place of ``target``'s definition: what write-back
    makes, and what the diff and the proof in a copy show.

    ``expected``: the definition's text in the file as the fix was proven on it (default: the
    target's own, read when it was loaded), dedented, decorators included.
    """
    return Edit(target.qualname, target.indent, expected if expected is not None else target.file_source,
                target.as_file_text(source), line=target.lineno)


def file_bytes_with(target: Target, source: str, check: bool = True) -> tuple[bytes, bytes]:
    """The target's file as it is, and as it would be with ``source`` in place of the definition (``check``:
    parsed, as write-back does, to see it still defines the target).

    Raises ``OSError`` when the file cannot be read, :class:`RewriteError` when the definition in it is
    not the one the target was loaded from (edited since, gone, or written twice)."""
    data = Path(target.filename).read_bytes()
    return data, rewrite(data, edit_of(target, source), check)


def file_text_with(target: Target, source: str) -> tuple[str, str]:
    """:func:`file_bytes_with` as text (the file's own encoding read, a byte-order mark left out)."""
    data, after = file_bytes_with(target, source, check=False)  # shown, not written
    encoding, bom = encoding_of(data)
    skip = len(codecs.BOM_UTF8) if bom else 0
    return data[skip:].decode(encoding), after[skip:].decode(encoding)


def unified_diff(target: Target, source: str) -> str:
    """A unified diff of the target's file, as ``patch -p0`` and ``git apply`` read it (of the definitions
    alone, named ``module.qualname``, where the file cannot say what the fix replaces)."""
    try:
        before, after = file_text_with(target, source)
        name = target.filename
    except (OSError, UnicodeDecodeError, RewriteError):
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
