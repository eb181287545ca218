"""``regrow heal --from CAPTURE``: a capture file written in one place, healed offline by the command
(a real subprocess), with the fix published in a store when one is given."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from regrow import Store
from regrow._service._worker import capture_call, write_capture

BUGGY = '''
def total(values):
    result = 0
    for i in range(1, len(values) + 1):
        result += values[i]
    return result


def test_total(fn):
    assert fn([2, 3, 5]) == 10
'''


def _regrow(folder: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    src = str(Path(__file__).parents[2] / "src")
    return subprocess.run([sys.executable, "-m", "regrow", *argv], cwd=folder, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": src}, timeout=600)


def test_a_capture_file_is_healed_offline_and_its_fix_published(make_module, tmp_path):
    module = make_module(BUGGY)
    capture = capture_call(module.total, [[2, 3, 5]], tests=[module.test_total])
    assert capture is not None
    path = write_capture(capture, tmp_path / "failure.json")
    assert json.loads(path.read_text()) == capture

    store = tmp_path / "fleet.db"
    done = _regrow(tmp_path, "heal", "--from", str(path), "--store", str(store), "--json")
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout)
    assert outcome["ok"] and outcome["fingerprint"] == capture["fingerprint"]
    namespace: dict[str, object] = {}
    exec(outcome["fix"], namespace)
    assert namespace["total"]([2, 3, 5]) == 10  # type: ignore[operator]
    opened = Store(store)
    try:
        assert opened.landed(f"{capture['source_hash']}:{capture['fingerprint']}")  # what the fleet adopts
    finally:
        opened.close()


def test_a_bad_capture_file_is_a_one_line_error(tmp_path):
    (tmp_path / "bad.json").write_text("{not json")
    done = _regrow(tmp_path, "heal", "--from", "bad.json")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [done.stderr.strip()]
    assert "bad.json is not a capture (not JSON" in done.stderr
    missing = _regrow(tmp_path, "heal", "--from", "nowhere.json")
    assert missing.returncode == 2 and "cannot read the capture nowhere.json" in missing.stderr
