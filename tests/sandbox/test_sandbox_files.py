"""Functions that write files (issue 10): a candidate does what the original does, inside its scratch folder.

A sandboxed call runs with its working directory, ``TMPDIR`` and ``tempfile.tempdir`` on a scratch
folder of its own, so a write to a relative path or a temporary file lands there and the fix is
proven; the host's working directory is untouched until the proven fix runs there. A write the
sandbox refuses (an absolute path outside scratch) that stops every candidate is said in one line.
"""

from __future__ import annotations

import os
import sys
import tempfile
import types
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import regrow
from regrow._candidate import Candidate
from regrow._heal._ledger import ledger_of
from regrow._sandbox import ForkSandbox, Limits, _seccomp

pytestmark = pytest.mark.skipif(sys.platform != "linux" or _seccomp.machine() is None, reason="Linux guards")

REPORT = '''
def save_report(values, path="report.txt"):
    total = sum(values[1:])
    with open(path, "w") as out:
        out.write(str(total))
    return total
'''

TEMPORARY = '''
import tempfile


def staged_total(values):
    with tempfile.NamedTemporaryFile("w+", suffix=".txt") as staging:
        staging.write(",".join(str(v) for v in values[1:]))
        staging.seek(0)
        return sum(int(part) for part in staging.read().split(","))
'''


def check_report(fn: Callable[..., int]) -> None:
    assert fn([1, 2, 3], "report.txt") == 6  # and it wrote report.txt, in the working directory it was given
    assert fn([2, 3], "report.txt") == 5  # a second call pins the fix (sum(values[0:]) vs sum(values[1:]) + 1)


def test_a_call_writes_relative_paths_and_temp_files_into_its_scratch_folder(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)

    def job() -> dict[str, str]:
        import tempfile

        Path("relative.txt").write_text("here")
        with tempfile.NamedTemporaryFile(delete=False) as temporary:
            name = temporary.name
        return {"cwd": os.getcwd(), "temp": name, "tmpdir": tempfile.gettempdir(),
                "read": Path("relative.txt").read_text()}

    with ForkSandbox(Limits(timeout=5)) as box:
        outcome = box.call(job)
    assert outcome.ok, outcome
    scratch = outcome.value["cwd"]
    assert "/regrow-sandbox-" in scratch and outcome.value["tmpdir"] == scratch
    assert outcome.value["temp"].startswith(scratch + "/") and outcome.value["read"] == "here"
    assert not (tmp_path / "relative.txt").exists() and not os.path.exists(scratch)  # scratch is gone afterwards


def test_repair_proves_a_fix_of_a_function_that_writes_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              make_module: Callable[[str], types.ModuleType]) -> None:
    module = make_module(REPORT)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    result = regrow.repair(module.save_report, ([1, 2, 3], "report.txt"), tests=[check_report], timeout=30)
    assert result.ok and result.installed, result.ledger()
    assert result.value == 6 and (work / "report.txt").read_text() == "6"  # the fixed call, in the host's cwd
    assert module.save_report([4, 5], "other.txt") == 9 and (work / "other.txt").read_text() == "9"


def test_heal_proves_a_fix_of_a_function_that_writes_a_temporary_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_module: Callable[[str], types.ModuleType]) -> None:
    module = make_module(TEMPORARY)
    monkeypatch.chdir(tmp_path)
    healed = regrow.heal(verify=lambda total: total == 6, timeout=30)(module.staged_total)
    assert healed([1, 2, 3]) == 6
    result = regrow.state(healed).last_result
    assert result is not None and result.ok, result


def test_heal_proves_a_fix_that_writes_relative_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      make_module: Callable[[str], types.ModuleType]) -> None:
    module = make_module(REPORT.replace("sum(values[1:])", "sum(values) + undefined_offset"))
    monkeypatch.chdir(tmp_path)
    healed = regrow.heal(tests=[check_report], timeout=30)(module.save_report)
    assert healed([1, 2, 3], "report.txt") == 6
    assert (tmp_path / "report.txt").read_text() == "6"


class Writers:
    """A proposer whose every candidate writes where the sandbox refuses: a path outside its scratch folder."""

    name = "writers"

    def __init__(self, path: Path) -> None:
        self.path = path

    def propose(self, request: object) -> Iterator[Candidate]:
        for offset in range(3):
            yield Candidate(f"def save_report(values, path={str(self.path)!r}):\n    total = sum(values) + {offset}\n"
                            f"    with open(path, 'w') as out:\n        out.write(str(total))\n    return total\n",
                            origin="writers")


def test_a_refused_write_that_stops_every_candidate_is_said_in_one_line(
        tmp_path: Path, make_module: Callable[[str], types.ModuleType], request: pytest.FixtureRequest) -> None:
    # Straight into the temporary folder, which holds every scratch folder: no throwaway view is ever made
    # of it (tests/test_sandbox_views.py), so writes there stay refused wherever the sandbox runs.
    outside = Path(os.path.realpath(tempfile.gettempdir())) / f"regrow-refused-{os.getpid()}-{tmp_path.name}.txt"
    request.addfinalizer(lambda: outside.unlink(missing_ok=True))
    module = make_module(REPORT.replace('path="report.txt"', f"path={str(outside)!r}"))

    def check(fn: Callable[..., int]) -> None:
        assert fn([1, 2, 3]) == 6

    line = f"open for writing outside the scratch directory: {outside}"
    result = regrow.repair(module.save_report, ([1, 2, 3],), tests=[check], proposers=[Writers(outside)], timeout=30)
    assert not result.ok and result.reason == f"every candidate was refused by the sandbox: {line}", result.reason
    engine = regrow.repair(module.save_report, ([1, 2, 3],), tests=[check], timeout=30)  # the engine's own search
    assert not engine.ok and "were refused by the sandbox, the first: " + line in engine.reason, engine.reason
    assert "\n" not in engine.reason
    healed = regrow.heal(verify=lambda total: total == 6, proposers=[Writers(outside)], timeout=30)(module.save_report)
    with pytest.raises(regrow.VerificationError) as raised:
        healed([1, 2, 3])
    notes = "\n".join([str(raised.value), ledger_of(raised.value)])
    assert f"every candidate was refused by the sandbox: {line}" in notes, notes


def _write_here() -> str:
    Path("left.txt").write_text("from the first call")
    os.mkdir("folder")
    return os.getcwd()


def _what_is_here() -> dict[str, object]:
    return {"cwd": os.getcwd(), "listing": sorted(os.listdir("."))}


def test_a_call_finds_its_scratch_empty_though_the_folder_serves_again() -> None:
    # Each child mounts a private tmpfs on its scratch folder, so the folder itself stays empty and is handed to
    # the next call instead of being removed (removing a folder that is a mount point elsewhere waits on the kernel).
    with ForkSandbox(Limits(timeout=30)) as box:
        first, second = box.call(_write_here), box.call(_what_is_here)
        root = box._forker._root
        assert first.ok and second.ok, (first, second)
        assert not {"left.txt", "folder"} & set(second.value["listing"])  # nothing of the first call reaches the second
        if os.geteuid() == 0:  # the private tmpfs needs root: only then is the folder reused
            assert second.value["cwd"] == first.value
        assert not any({"left.txt", "folder"} & set(os.listdir(os.path.join(root, name))) for name in os.listdir(root))
    assert not os.path.exists(root)


def test_a_scratch_folder_left_with_files_is_never_handed_out_again() -> None:
    with ForkSandbox(Limits(timeout=30, scratch_bytes=None)) as box:  # on disk: what a call writes stays there
        first, second = box.call(_write_here), box.call(_what_is_here)
        assert first.ok and second.ok, (first, second)
        assert not {"left.txt", "folder"} & set(second.value["listing"]) and second.value["cwd"] != first.value
        assert not os.path.exists(first.value)
