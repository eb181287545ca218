"""Functions that write files can be healed (issue 19): their candidates write to throwaway views.

A function that writes a report into a real folder used to be unhealable: every candidate's write
there was refused by the sandbox. Now the session finds the folders the original writes (it runs the
original once under the checks in the sandbox and reads what was refused), and every candidate runs
with a throwaway view of each (an overlayfs in the child's own mount namespace): it reads the real
folder and writes a copy that is gone with the child. During the whole repair the real folder never
changes — content, modification times, listing — and the healed function then writes it for real.
Linux, as root (overlayfs in a mount namespace of the child's own); the tests are skipped elsewhere.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import tempfile
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from scripted import Scripted

import regrow
from regrow._checks._writes import MAX_VIEWS, available, grow
from regrow._sandbox import ForkSandbox, Limits, _seccomp

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or _seccomp.machine() is None or not available(ForkSandbox()),
    reason="throwaway views need Linux, root and overlayfs")

REPORT = '''
import os


def write_report(folder, items):
    lines = [f"{number}: {item}" for number, item in enumerate(items[1:], start=1)]
    with open(os.path.join(folder, "report.txt"), "w") as out:
        out.write("\\n".join(lines) + "\\n")
    return len(lines)
'''

FIXED = '''
def write_report(folder, items):
    lines = [f"{number}: {item}" for number, item in enumerate(items, start=1)]
    with open(os.path.join(folder, "report.txt"), "w") as out:
        out.write("\\n".join(lines) + "\\n")
    return len(lines)
'''

ITEMS = ["apples", "pears", "plums"]
RIGHT = "1: apples\n2: pears\n3: plums\n"

Snapshot = dict[str, tuple[bytes, int, int]]


def snapshot(folder: Path) -> Snapshot:
    """Every entry under ``folder`` (the folder itself included): content, mtime in ns, mode."""
    seen: Snapshot = {".": (b"", folder.stat().st_mtime_ns, folder.stat().st_mode)}
    for path in sorted(folder.rglob("*")):
        info = path.lstat()
        content = path.read_bytes() if path.is_file() else b""
        seen[str(path.relative_to(folder))] = (content, info.st_mtime_ns, info.st_mode)
    return seen


@pytest.fixture
def reports(tmp_path: Path) -> Path:
    folder = tmp_path / "reports"
    folder.mkdir()
    (folder / "report.txt").write_text("an old report\n")
    (folder / "keep.txt").write_text("not the function's\n")
    return folder


class Watch:
    """Snapshots of the real folder when the session starts and when it installs (or gives up)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.seen: dict[str, Snapshot] = {}

    def __call__(self, event: Any) -> None:
        if event.type in ("session_start", "installed", "exhausted"):
            self.seen[event.type] = snapshot(self.folder)


def heal_report(module: types.ModuleType, folder: Path, **options: Any) -> tuple[regrow.RepairResult, Watch]:
    watch = Watch(folder)
    result = regrow.repair(module.write_report, (str(folder), ITEMS), verify=lambda count: count == 3,
                           on_event=watch, timeout=60, candidate_timeout=10, **options)
    return result, watch


@pytest.mark.parametrize("proposer", ["engine", "scripted"])
def test_a_function_that_writes_a_report_into_a_real_folder_is_healed(
        proposer: str, reports: Path, make_module: Callable[[str], types.ModuleType]) -> None:
    module = make_module(REPORT)
    proposers = [Scripted(FIXED)] if proposer == "scripted" else None
    result, watch = heal_report(module, reports, proposers=proposers)
    assert result.ok and result.installed == "code", result.ledger()
    assert result.fix is not None and result.fix.origin == proposer
    # Nothing the repair ran touched the real folder: the first (failing) call wrote it, the healed one after.
    assert watch.seen["session_start"] == watch.seen["installed"]
    assert (reports / "report.txt").read_text() == RIGHT  # written for real by the healed call repair() made
    (reports / "report.txt").unlink()
    assert module.write_report(str(reports), ITEMS) == 3 and (reports / "report.txt").read_text() == RIGHT
    assert (reports / "keep.txt").read_text() == "not the function's\n"


PLANTING = FIXED.replace('    return len(lines)\n', '''    elsewhere = os.path.join(folder, "..", "elsewhere")
    with open(os.path.join(elsewhere, "planted.txt"), "w") as planted:
        planted.write("a candidate's own file")
    return len(lines)
''')


def test_a_candidate_that_writes_outside_the_views_is_still_refused(
        reports: Path, make_module: Callable[[str], types.ModuleType]) -> None:
    elsewhere = reports.parent / "elsewhere"
    elsewhere.mkdir()
    module = make_module(REPORT)
    result, watch = heal_report(module, reports, proposers=[Scripted(PLANTING)])
    planted = elsewhere / "planted.txt"
    assert not result.ok, result.ledger()
    assert f"refused by the sandbox: open for writing outside the scratch directory: {planted}" in result.reason
    assert watch.seen["session_start"] == watch.seen["exhausted"] and list(elsewhere.iterdir()) == []


def through_the_view(folder: str) -> dict[str, Any]:
    """Every way a call might write the real file behind its view; what it then reads there; what was refused."""
    report, keep = f"{folder}/report.txt", f"{folder}/keep.txt"
    seen: dict[str, Any] = {"refused": []}
    with open(report, "w") as out:
        out.write("overwritten")
    with open(report, "a") as out:
        out.write(" and appended")
    fd = os.open(f"/proc/self/root{folder}/keep.txt", os.O_WRONLY | os.O_TRUNC)
    os.write(fd, b"through /proc/self/root")
    os.close(fd)
    os.rename(keep, f"{folder}/moved.txt")
    os.mkdir(f"{folder}/made")
    with open(f"{folder}/made/new.txt", "w") as out:
        out.write("new")
    os.remove(report)
    layers = ".regrow-views/0/upper/report.txt"  # where the view keeps what it holds: covered, read-only
    for outside in (f"{os.path.dirname(folder)}/elsewhere/planted.txt", f"/proc/1/root{folder}/report.txt", layers):
        try:
            with open(outside, "w") as out:
                out.write("escaped")
        except OSError as exc:
            seen["refused"].append(type(exc).__name__)
    seen["listing"] = sorted(os.listdir(folder))
    with open(f"{folder}/moved.txt") as moved:
        seen["moved"] = moved.read()
    return seen


@pytest.mark.parametrize("hook", ["hook", "kernel alone"])
def test_a_view_never_writes_through_to_the_real_folder(
        hook: str, reports: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from regrow._sandbox import _guard

    if hook == "kernel alone":  # an audit hook that allows everything: only Landlock and the mounts stand
        monkeypatch.setattr(_guard, "make_audit_hook", lambda *args: (lambda event, arguments: None))
    elsewhere = reports.parent / "elsewhere"
    elsewhere.mkdir()
    before = snapshot(reports)
    with ForkSandbox() as sandbox:
        outcome = sandbox.call(through_the_view, str(reports), limits=Limits(timeout=30, views=(str(reports),)))
    if hook == "hook":  # the hook names the first path it does not know as a view's, and refuses the call
        assert outcome.status == "refused" and "/proc/self/root" in outcome.violations[0], outcome
    else:  # Landlock refuses them: the call sees PermissionError, nothing else does
        assert outcome.ok, outcome
        assert outcome.value["refused"] == ["PermissionError", "PermissionError", "FileNotFoundError"]
        assert outcome.value["listing"] == ["made", "moved.txt"]
        assert outcome.value["moved"] == "through /proc/self/root"
    assert snapshot(reports) == before and list(elsewhere.iterdir()) == []


def test_what_the_views_hold_is_bounded_by_the_scratch_size(reports: Path) -> None:
    def fill(folder: str) -> str:
        try:
            with open(f"{folder}/big.bin", "wb") as out:
                out.write(b"x" * (4 << 20))
        except OSError as exc:
            return os.strerror(exc.errno or 0)
        return "written"

    with ForkSandbox() as sandbox:
        view = Limits(timeout=30, views=(str(reports),))
        small = sandbox.call(fill, str(reports), limits=dataclasses.replace(view, scratch_bytes=1 << 20))
        large = sandbox.call(fill, str(reports), limits=view)
    assert small.value == os.strerror(28) and large.value == "written"  # ENOSPC past scratch_bytes
    assert not (reports / "big.bin").exists()


def test_only_folders_that_may_have_a_view_get_one(tmp_path: Path) -> None:
    made = [tmp_path / name for name in ("a", "b", "c", "d", "e")]
    for folder in made:
        (folder / "sub").mkdir(parents=True)
    temp = os.path.realpath(tempfile.gettempdir())

    def refused(path: Path | str) -> str:
        return f"open for writing outside the scratch directory: {path}"

    assert grow((), [refused(made[0] / "sub" / "r.txt")]) == (str(made[0] / "sub"),)
    assert grow((str(made[0] / "sub"),), [refused(made[0] / "r.txt")]) == (str(made[0]),)  # holds the other: replaces
    assert grow((str(made[0]),), [refused(made[0] / "sub" / "r.txt")]) == (str(made[0]),)  # inside a view already
    assert grow((), [f"os.rename outside the scratch directory: {made[0]}/x -> {made[1]}/y"]) == (
        str(made[0]), str(made[1]))
    assert grow((), [refused(made[0] / "missing" / "deeper" / "r.txt")]) == (str(made[0]),)  # nearest existing
    assert len(grow((), [refused(folder / "r.txt") for folder in made])) == MAX_VIEWS
    for never in ("/r.txt", f"{temp}/r.txt", "/proc/self/r", "/sys/kernel/r", "/dev/shm/r", "relative/r.txt"):
        assert grow((), [refused(never)]) == (), never
    assert grow((), [f"open of a secret-bearing file: {made[0]}/r.txt", "os.kill signal 9 to process 1"]) == ()
