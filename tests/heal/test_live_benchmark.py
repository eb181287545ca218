"""benchmarks/live.py end to end, small: a real app served by uvicorn on loopback, with and without regrow.

Asserts what the benchmark's figures rest on, never a time: the distinct bad inputs of the one bug
start one repair session, the fix is installed, and no request sent after it fails.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_live_benchmark_starts_one_session_for_many_distinct_bad_inputs(tmp_path: Path) -> None:
    out = tmp_path / "live.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "live.py"), "--servers", "starlette", "--requests", "400",
         "--warmup", "40", "--rate", "40", "--threads", "4", "--hook-rounds", "3", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads(out.read_text())
    figures = results["servers"]["starlette"]
    assert figures["bad_requests"] == 72  # every 5th of the 360 after the warm-up, each a distinct input
    assert figures["sessions_started"] == 1
    assert figures["fixes_installed"] == 1
    assert figures["baseline_whole_run"]["error_rate"] > 0.15  # the bug is there without regrow
    before, after = figures["phases"]["before"]["regrow"], figures["phases"]["after"]["regrow"]
    assert before["requests"] >= 40 and before["error_rate"] == 0
    if after["requests"]:  # the fix landed before the load ended
        assert after["error_rate"] == 0 and after["wrong_rate"] == 0
    assert set(results["hook"]) >= {f"{sys.version_info[0]}.{sys.version_info[1]} (this)"}
    assert "repair sessions started: 1 (goal 1)" in done.stdout
