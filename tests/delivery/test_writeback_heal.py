"""The decorator keeps its fixes when asked: heal(write_back=...) and regrow.state(f).write_back(mode)."""

from __future__ import annotations

import json
import logging
import subprocess
from pathlib import Path

import pytest

import regrow

MODULE = '''\
import regrow


# The comment above stays.
@regrow.heal(verify=lambda total: total == 5, sandbox="inprocess", write_back={mode!r}{extra})
def add(a, b):
    """Adds."""
    return a - b  # the bug
'''


def module(make_module, mode: str, extra: str = "") -> object:
    return make_module(MODULE.format(mode=mode, extra=extra))


def test_apply_writes_the_fix_into_the_file(make_module):
    mod = module(make_module, "apply")
    assert mod.add(2, 3) == 5
    path = Path(mod.__file__)
    assert path.read_text() == MODULE.format(mode="apply", extra="").replace("return a - b", "return a + b")
    [backup] = regrow.state(mod.add).keeper.kept
    assert backup.read_text() == MODULE.format(mode="apply", extra="")


def test_off_writes_nothing_until_asked_then_a_patch_and_its_record(make_module, tmp_path):
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    store = tmp_path / "ledger.db"
    mod = module(make_module, "off", f", store={str(store)!r}")
    path = Path(mod.__file__)
    subprocess.run(["git", "add", path.name], cwd=tmp_path, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start"], cwd=tmp_path,
                   check=True)
    original = path.read_bytes()
    assert mod.add(2, 3) == 5
    assert path.read_bytes() == original and not (tmp_path / ".regrow" / "backups").exists()
    kept = regrow.state(mod.add).write_back("patch")
    assert kept is not None and kept.parent == tmp_path / ".regrow" / "patches"
    record = json.loads(kept.read_text())
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True, text=True).stdout.strip()
    assert record["kind"] == "fix" and record["qualname"] == "add" and record["git_head"] == head
    assert record["ledger_id"] == regrow.Store(store).sessions("add")[0]["id"]
    assert record["checks"] and record["proved_by"] and record["origin"] == "engine"
    assert len(record["file_sha256_before"]) == 64 and record["file_sha256_before"] != record["file_sha256_after"]
    patch = kept.with_suffix(".patch")
    checked = subprocess.run(["git", "apply", "--check", str(patch)], cwd=tmp_path, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    assert path.read_bytes() == original  # a patch is not a write
    assert regrow.state(mod.add).write_back("apply") is not None  # the pending fix, now into the file
    assert "return a + b" in path.read_text()
    subprocess.run(["git", "apply", "-R", "--check", str(patch)], cwd=tmp_path, check=True)  # the patch's fix


def test_a_delivery_that_fails_never_undoes_the_repair(make_module, caplog):
    mod = module(make_module, "apply")
    path = Path(mod.__file__)
    path.chmod(0o444)
    with caplog.at_level(logging.WARNING, logger="regrow"):
        assert mod.add(2, 3) == 5  # repaired and installed
    assert "installed but was not kept" in caplog.text and "read-only" in caplog.text
    assert "return a - b" in path.read_text()
    assert mod.add(2, 3) == 5 and len(regrow.state(mod.add).results) == 1  # still the fix, no second repair
    with pytest.raises(regrow.RegrowError, match="read-only"):
        regrow.state(mod.add).write_back("apply")
    regrow.state(mod.add).write_back("apply", force=True)
    assert "return a + b" in path.read_text()


def test_a_mode_is_checked_at_decoration():
    with pytest.raises(ValueError, match="write_back must be one of 'off', 'patch', 'apply'"):
        regrow.heal(write_back="always")  # type: ignore[arg-type]


def test_state_write_back_switches_the_mode(make_module):
    mod = module(make_module, "off")
    state = regrow.state(mod.add)
    assert state.write_back("apply") is None  # no fix yet: nothing to write, the mode is set
    assert mod.add(2, 3) == 5
    assert "return a + b" in Path(mod.__file__).read_text()
    with pytest.raises(ValueError, match="write_back must be one of"):
        state.write_back("sometimes")  # type: ignore[arg-type]
