"""Writing a proven fix back to its source file, keeping every byte the fix did not change.

In order, under a lock on the file: read it; refuse a file with uncommitted git changes that are not
regrow's own earlier write-backs (:mod:`regrow._delivery._own_writes`), a read-only or hard-linked file
(unless forced); find the definition by qualname and check it is still the text the fix was proven
on; build the new bytes and re-parse them; keep a backup in ``.regrow/backups/`` at the project root;
replace the file atomically with its mode and owner; read it back; record the write as regrow's.
When a step after the replace fails, the backup is put back, and the file is byte for byte what it
was. See :mod:`regrow._target._rewrite` for what "every byte" means, and :mod:`regrow._delivery._files` for the atomic
replace.
"""

from __future__ import annotations

import dataclasses
import os
import stat
from collections.abc import Callable
from pathlib import Path

from .._errors import RegrowError
from .._target._diff import edit_of
from .._target._rewrite import Edit, RewriteError, rewrite
from .._target._source import dedent
from .._target._target import Target
from . import _files, _own_writes
from ._git import GitError
from ._own_writes import Place, place_of


class WriteBackError(RegrowError):
    """The fix could not be written back; the file is as it was. ``forceable``: forcing would write it,
    and the message ends by saying so with ``force=True`` (:func:`forceable` names another option)."""

    HINT = " ({} writes it anyway)"

    def __init__(self, message: str, forceable: bool = False) -> None:
        super().__init__(message + (self.HINT.format("force=True") if forceable else ""))
        self.reason, self.forceable = message, forceable


def forceable(exc: RegrowError, option: str) -> str:
    """The message of ``exc``, naming ``option`` (``--force``) as what would write it anyway."""
    if isinstance(exc, WriteBackError) and exc.forceable:
        return exc.reason + WriteBackError.HINT.format(option)
    return str(exc)


@dataclasses.dataclass(frozen=True)
class Written:
    """A write-back that landed: the file, its backup, and its bytes before and after."""

    path: Path
    backup: Path
    before: bytes
    after: bytes


def written_text(target: Target, source: str) -> str:
    """``source`` as the file's definition reads after a write-back, dedented (the next ``expected``)."""
    return dedent(target.as_file_text(source), target.indent)


def plan(target: Target, source: str, expected: str | None = None) -> tuple[bytes, bytes]:
    """The file's bytes now, and with the fix in place (nothing written); raises :class:`WriteBackError`."""
    path = Path(target.filename)
    before = _read(path)
    return before, _rewritten(path, before, edit_of(target, source, expected))


def write_back(target: Target, source: str, *, force: bool = False, expected: str | None = None,
               after: Callable[[Path], None] | None = None) -> Written:
    """Replace ``target``'s definition in its file with ``source``.

    ``force`` writes over a file with uncommitted git changes, a read-only or a hard-linked file.
    ``after`` runs once the new text has landed (still under the lock); if it raises, the file is
    restored from the backup and :class:`WriteBackError` says why.
    """
    return write_edit(Path(target.filename), edit_of(target, source, expected), force=force, after=after)


def write_edit(path: Path, edit: Edit, *, force: bool = False, after: Callable[[Path], None] | None = None) -> Written:
    """Make ``edit`` in the file ``path`` (see :func:`write_back`)."""
    real = path.resolve()  # a symlink's target is what is written: the link stays a link
    refuse_installed(path, f"not writing {edit.qualname} back")
    with _files.locked(real):
        _files.remove_stale_temps(real)
        try:
            info = os.stat(real)
        except OSError as exc:
            raise WriteBackError(f"cannot read {path}: {exc}") from exc
        if not stat.S_ISREG(info.st_mode):
            raise WriteBackError(f"not writing {edit.qualname} back: {path} is not a regular file")
        before = _read(real)
        place = place_of(real)
        _files.remove_stale_temps(_own_writes.backup_folder(place, make=False) / real.name)
        dirty, base = _dirty(place, real, before)
        refused = "; ".join(reason for reason in ([] if force else [_files.refusal(real, info), dirty]) if reason)
        if refused:
            raise WriteBackError(f"not writing {edit.qualname} back: {refused}", forceable=True)
        new = _rewritten(path, before, edit)
        try:
            kept = _files.backup(real, before, info, _own_writes.backup_folder(place))
        except OSError as exc:
            raise WriteBackError(f"cannot keep a backup of {path} ({exc}); nothing written") from exc
        try:
            _files.replace(real, new, info)
        except (OSError, _files.FileError) as exc:
            raise WriteBackError(f"cannot write {path} ({exc}); it is as it was") from exc
        try:
            if _read(real) != new:
                raise WriteBackError(f"{path} did not read back as written")
            if after is not None:
                after(real)
        except BaseException as exc:
            _restore(real, kept, info, before)
            if isinstance(exc, Exception):
                raise WriteBackError(f"{path} was restored from {kept.name}: after the write, {exc}") from exc
            raise
        if base is not None:  # the file was clean (or only regrow's): now it is only regrow's
            _own_writes.remember(place, base, new)
    return Written(real, kept, before, new)


def refuse_installed(path: Path, doing: str) -> None:
    """Raise :class:`WriteBackError` when ``path`` is in one of this interpreter's package folders
    (site-packages: ``sysconfig``'s purelib and platlib, ``site``'s): that code was installed, not edited
    in place, and a fix written there is lost at the next install (and reaches no one else)."""
    import site
    import sys
    import sysconfig

    folders = {sysconfig.get_paths()[key] for key in ("purelib", "platlib")}
    folders |= {sysconfig.get_paths(vars={"base": sys.base_prefix, "platbase": sys.base_exec_prefix})[key]
                for key in ("purelib", "platlib")}
    folders |= {*site.getsitepackages(), site.getusersitepackages()}
    real = path.resolve()
    for folder in sorted(folders):
        if real.is_relative_to(Path(folder).resolve()):
            raise WriteBackError(f"{doing}: {path} is installed code (under {folder}), not the source it was "
                                 f"installed from; fix that source (an editable install, pip install -e, "
                                 f"runs it in place)")


def _restore(path: Path, backup: Path, info: os.stat_result, before: bytes) -> None:
    data = backup.read_bytes()
    if data != before:  # never put back anything but what was read
        data = before
    _files.replace(path, data, info)


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise WriteBackError(f"cannot read {path}: {exc}") from exc


def _rewritten(path: Path, before: bytes, edit: Edit) -> bytes:
    try:
        return rewrite(before, edit)
    except RewriteError as exc:
        raise WriteBackError(f"not writing {edit.qualname} back to {path}: {exc}") from exc


def _dirty(place: Place, path: Path, data: bytes) -> tuple[str, str | None]:
    """Why ``path`` (whose bytes are ``data``) counts as having uncommitted changes ("" when it does not),
    and the ``HEAD`` blob its changes are counted from when they are none or only regrow's own writes."""
    if place.unusable:
        return f"cannot tell whether {path} has uncommitted changes: {place.unusable}", None
    if place.git is None:
        return "", None
    try:
        said = place.git.changes(path)
    except GitError as exc:
        return f"cannot tell whether {path} has uncommitted changes: {exc}", None
    if not said:
        return "", _own_writes.committed_blob(place)
    ours = _own_writes.only_ours(place, data)
    if ours is not None:
        return "", ours
    return f"{path} has uncommitted changes ({said.split()[0]} in git status)", None
