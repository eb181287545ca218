"""The file system, for writes into the user's tree: a lock, an atomic replace that keeps the
file's mode and owner, and backups that are never overwritten (kept in a folder the caller names:
``.regrow/backups/`` at the project root, see :mod:`regrow._delivery._own_writes`).

An atomic replace writes a temporary file in the same folder (a rename across file systems would
not be atomic), flushes it to disk, gives it the original's mode and owner, renames it over the
original and flushes the folder: whatever kills the process, the file is the old bytes or the new.
A temporary file left by a killed writer is removed by the next write under the same lock.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from .._errors import RegrowError

TEMP_SUFFIX = ".regrow-tmp"
LOCK_SECONDS = 60.0


class FileError(RegrowError):
    """A file could not be written as asked; it is as it was."""


def lock_path(path: Path) -> Path:
    """The lock of ``path``, outside the user's tree (a lock file there would show in ``git status``)."""
    folder = Path(tempfile.gettempdir()) / "regrow-locks"
    if not folder.is_dir():
        folder.mkdir(exist_ok=True)
        with contextlib.suppress(OSError):  # shared by every user of the machine, like /tmp itself
            folder.chmod(0o1777)
    return folder / (hashlib.sha256(str(path).encode()).hexdigest()[:32] + ".lock")


@contextlib.contextmanager
def locked(path: Path, timeout: float = LOCK_SECONDS) -> Iterator[None]:
    """Hold the write lock of ``path`` (across processes; released by the kernel if this one dies)."""
    import filelock

    lock = filelock.FileLock(str(lock_path(path)), timeout=timeout, mode=0o666)
    try:
        lock.acquire()
    except filelock.Timeout as exc:
        raise FileError(f"{path} is being written by another process (its lock was held for {timeout:g}s)") from exc
    try:
        yield
    finally:
        lock.release()


def remove_stale_temps(path: Path) -> None:
    """Temporary files of earlier writes of ``path`` that were killed (call with the lock held)."""
    for stale in path.parent.glob(f".{path.name}.*{TEMP_SUFFIX}"):
        with contextlib.suppress(OSError):
            stale.unlink()


def replace(path: Path, data: bytes, like: os.stat_result | None) -> None:
    """Put ``data`` at ``path`` atomically, with the mode, owner and group of ``like`` (else mode 644)."""
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=TEMP_SUFFIX)
    tmp = Path(name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if like is not None:
            _keep_owner(tmp, like)
        os.chmod(tmp, stat.S_IMODE(like.st_mode) if like is not None else 0o644)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _sync_folder(path.parent)


def _keep_owner(tmp: Path, like: os.stat_result) -> None:
    made = tmp.stat()
    if (made.st_uid, made.st_gid) == (like.st_uid, like.st_gid):
        return
    try:
        os.chown(tmp, like.st_uid, like.st_gid)
    except OSError as exc:
        raise FileError(f"the new file cannot keep the owner {like.st_uid}:{like.st_gid} of the original ({exc}); "
                        "not replacing it") from exc


def _sync_folder(folder: Path) -> None:
    """Flush the rename itself to disk (a crash right after could otherwise lose it)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def backup(path: Path, data: bytes, like: os.stat_result, folder: Path) -> Path:
    """Keep ``data`` in ``folder`` as ``path``'s name (then ``.1``, ``.2``, …: a name no earlier backup
    has); returns that name."""
    folder.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=TEMP_SUFFIX)
    tmp = Path(name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, stat.S_IMODE(like.st_mode))
        target = _link_free(tmp, folder / path.name)
    finally:
        tmp.unlink(missing_ok=True)
    _sync_folder(folder)
    return target


def _link_free(tmp: Path, first: Path) -> Path:
    """Link ``tmp`` to ``first`` or the first free ``first.N`` (a link fails rather than overwrite)."""
    taken = {p.name for p in first.parent.glob(f"{first.name}*")}
    number = 0
    while True:
        candidate = first if number == 0 else first.with_name(f"{first.name}.{number}")
        number += 1
        if candidate.name in taken:
            continue
        try:
            os.link(tmp, candidate)
        except FileExistsError:
            continue
        return candidate


def refusal(path: Path, info: os.stat_result) -> str:
    """Why ``path`` should not be replaced without ``force`` ("" when it may)."""
    if not info.st_mode & 0o222:
        return f"{path} is read-only (mode {stat.S_IMODE(info.st_mode):o})"
    if info.st_nlink > 1:
        return f"{path} has {info.st_nlink} hard links, which replacing it would split"
    return ""
