"""Which folders the function being healed writes, so that its candidates are proven on throwaway views.

The sandbox refuses every write outside a candidate's scratch folder, so a function that writes a
report to ``/srv/app/report.txt`` (or into a folder its caller passes) used to be unhealable: each of
its candidates was refused. Where the sandbox can give a call throwaway views of folders
(``Limits.views``: Linux, as root, the fork sandbox), the session first runs the *original* once under
its checks in the sandbox (:func:`probe`): each write the sandbox refuses it names a folder, which gets
a view, and the probe runs again with the views until it finds no new folder (at most four views).
Every candidate — and the engine's warm worker — then runs with those views: its writes land in a
throwaway copy of each folder, read back as written, and the real folder never changes.

Only what the original writes gets a view: a candidate that writes somewhere else is still refused,
since a fix installed in your process would write there for real. Never a view: ``/``, a folder that
holds the temporary folder (where every scratch folder lives), ``/proc``, ``/sys``, ``/dev``.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import sys
import tempfile
from collections.abc import Iterable, Sequence
from typing import Any

from .._sandbox import ForkSandbox, Limits, Sandbox
from .._target._target import Target
from ._evaluate import evaluate
from ._oracles import Check

MAX_VIEWS = 4
_OUTSIDE = "outside the scratch directory: "  # how the audit hook names a refused write (see _sandbox._hook)
_PSEUDO = ("/proc", "/sys", "/dev")
_SHOWN = 200  # the hook shows at most this many characters of a path: one that long may be cut


@functools.lru_cache(maxsize=1)
def _overlay_supported() -> bool:
    try:
        with open("/proc/filesystems", encoding="ascii", errors="replace") as kinds:
            return any(line.split()[-1:] == ["overlay"] for line in kinds)
    except OSError:
        return False


def available(sandbox: Sandbox) -> bool:
    """Whether candidates judged in ``sandbox`` can have throwaway views (the fork sandbox, Linux, root)."""
    return (isinstance(sandbox, ForkSandbox) and sys.platform == "linux" and os.geteuid() == 0
            and _overlay_supported())


def written(reason: str) -> list[str]:
    """The absolute paths a refusal of the sandbox says were written outside scratch (none for others)."""
    where = reason.find(_OUTSIDE)
    if where < 0 or not reason[:where].removeprefix("refused ").startswith(("open ", "os.", "shutil.")):
        return []
    paths = reason[where + len(_OUTSIDE):].split(" -> ")  # a rename names both ends
    return [path for path in paths if path.startswith("/") and len(path) < _SHOWN and "\n" not in path]


def folder_of(path: str) -> str | None:
    """The folder whose view lets ``path`` be written: the nearest existing folder above it, if allowed."""
    folder = os.path.dirname(os.path.normpath(path))
    while folder != "/" and not os.path.isdir(folder):
        folder = os.path.dirname(folder)
    return folder if allowed(folder) else None


def allowed(folder: str) -> bool:
    """Whether ``folder`` may have a view: absolute and normal, not ``/``, not a pseudo file system, not one
    that holds the temporary folder (every scratch folder is in it)."""
    if not folder.startswith("/") or folder == "/" or os.path.normpath(folder) != folder:
        return False
    if any(folder == top or folder.startswith(top + "/") for top in _PSEUDO):
        return False
    temp = os.path.realpath(tempfile.gettempdir())
    return not (temp == folder or temp.startswith(folder + "/")) and os.path.isdir(folder)


def grow(views: tuple[str, ...], reasons: Iterable[str]) -> tuple[str, ...]:
    """``views`` with the folders ``reasons`` name written, at most :data:`MAX_VIEWS`: a folder inside a
    view is covered by it, and a new folder that holds views replaces them."""
    found = list(views)
    for reason in reasons:
        for path in written(reason):
            folder = folder_of(path)
            if folder is None or any(folder == view or folder.startswith(view + "/") for view in found):
                continue
            kept = [view for view in found if not view.startswith(folder + "/")]
            if len(kept) < MAX_VIEWS:
                found = [*kept, folder]
    return tuple(found)


def probe(target: Target, checks: Sequence[Check], sandbox: Sandbox, limits: Limits) -> tuple[str, ...]:
    """The views the original needs: run it under ``checks`` in ``sandbox`` with the views found so far
    (``limits.views`` to start with) until it is refused no write in a folder that may have one."""
    views = limits.views
    if not checks or not available(sandbox):
        return views
    for _ in range(MAX_VIEWS):
        outcome = sandbox.call(original_job, target, list(checks), limits=dataclasses.replace(limits, views=views))
        grown = grow(views, outcome.violations)
        if grown == views:
            break
        views = grown
    return views


def original_job(target: Target, checks: list[Check]) -> dict[str, Any]:
    """The probe's job, run in the sandbox: the original under the checks (its verdict is not used)."""
    return evaluate(target, target.bare_source, checks)
