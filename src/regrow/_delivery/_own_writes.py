"""What regrow itself wrote: so that its own write-back does not make a file "dirty" for the next one.

A write-back refuses a file with uncommitted git changes (they are the user's work, and a backup
beside them is no review). Regrow's own write is not such a change: after each write-back into a
file that was clean, regrow keeps a record of the file (its path relative to the project root, the
id of its blob in ``HEAD`` and the sha256 of its bytes after the write). The next write-back of that
file — in this process or a later one — treats it as clean when its bytes are still exactly those
and ``HEAD`` still holds the same blob: its only changes are regrow's. Any other edit (or a commit
that moves the file's ``HEAD`` blob) makes the record stale, and the file is dirty again.

Records live in ``.regrow/writes/`` at the project root (a ``.gitignore`` there keeps them out of
``git status``), one small JSON file per source file, written under that file's write lock; and in
memory, for a project whose ``.regrow`` folder cannot be written. Backups live in
``.regrow/backups/`` beside them (:func:`backup_folder`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import threading
from pathlib import Path

from . import _files
from ._git import Git, GitError

FOLDER = ".regrow"
_IGNORE_ALL = b"# written by regrow: nothing in here belongs in git\n*\n"


@dataclasses.dataclass(frozen=True)
class Place:
    """Where a source file sits: its repository (if any), the project root and its path relative to it."""

    git: Git | None
    root: Path
    relative: str
    unusable: str = ""  # why git cannot be asked about a file that is in a repository ("" when it can)


def place_of(path: Path) -> Place:
    """The project root of ``path``: the top of its git work tree, else the nearest folder above it
    holding a ``pyproject.toml``, else its own folder."""
    real = path.resolve()
    try:
        git = Git.of(real)
    except GitError as exc:  # in a repository git cannot read: its top is still the project's root
        root = next(p for p in (real, *real.parents) if (p / ".git").exists())
        return Place(None, root, real.relative_to(root).as_posix(), str(exc))
    if git is not None:
        root = git.root.resolve()
    else:
        root = next((p for p in real.parents if (p / "pyproject.toml").is_file()), real.parent)
    return Place(git, root, real.relative_to(root).as_posix())


def backup_folder(place: Place, make: bool = True) -> Path:
    """Where the file's backups go: ``.regrow/backups/`` under the project root, then the file's own
    folders (``make``: the ``.regrow/backups`` folder made, with a ``.gitignore``)."""
    top = _private(place.root, "backups") if make else place.root / FOLDER / "backups"
    return top / Path(place.relative).parent


def _private(root: Path, name: str) -> Path:
    folder = root / FOLDER / name
    folder.mkdir(parents=True, exist_ok=True)
    ignore = folder / ".gitignore"
    if not ignore.exists():
        with contextlib.suppress(OSError):
            ignore.write_bytes(_IGNORE_ALL)
    return folder


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


_memory: dict[tuple[Path, str], dict[str, str]] = {}
_memory_lock = threading.Lock()


def _record_path(place: Place) -> Path:
    return place.root / FOLDER / "writes" / (sha256(place.relative.encode())[:32] + ".json")


def committed_blob(place: Place) -> str | None:
    """The id of the file's blob in ``HEAD`` (``None``: not in git, untracked, or no commit)."""
    if place.git is None:
        return None
    try:
        done = place.git.run("rev-parse", "--verify", "--quiet", f"HEAD:{place.relative}", check=False)
    except GitError:
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode().strip() or None


def recorded(place: Place) -> dict[str, str] | None:
    """The record of regrow's last write of the file, if any (call with the file's lock held)."""
    try:
        found = json.loads(_record_path(place).read_bytes())
    except (OSError, ValueError):
        found = None
    if not isinstance(found, dict) or found.get("path") != place.relative:
        with _memory_lock:
            found = _memory.get((place.root, place.relative))
    return found if isinstance(found, dict) else None


def only_ours(place: Place, data: bytes) -> str | None:
    """The ``HEAD`` blob the file's changes are counted from, when ``data`` (its bytes now) is exactly
    what regrow's last write of it left and ``HEAD`` has not moved under it; else ``None``."""
    found = recorded(place)
    if found is None or found.get("after") != sha256(data):
        return None
    base = committed_blob(place)
    return base if base is not None and found.get("base") == base else None


def remember(place: Place, base: str, after: bytes) -> None:
    """Keep the record of a write that left ``after`` in a file whose changes from ``base`` are regrow's."""
    record = {"path": place.relative, "base": base, "after": sha256(after)}
    with _memory_lock:
        _memory[(place.root, place.relative)] = record
    try:
        target = _record_path(place)
        _private(place.root, "writes")
        _files.replace(target, json.dumps(record).encode(), None)
    except OSError:
        pass  # the record in memory still serves this process
