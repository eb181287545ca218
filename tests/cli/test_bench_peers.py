"""``make bench-peers``'s harness (benchmarks/peers): summary.json's schema, one SVG bar per ratio, and a
peer that is not installed reported as missing with its reason. No timing is asserted: the figures are
real measurements (a quick run), only their shape is checked."""

from __future__ import annotations

import json
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "peers"
sys.path.insert(0, str(BENCH))

import bench_peers  # noqa: E402
import peers_summary  # noqa: E402


def test_a_quick_run_writes_the_summary_and_one_bar_per_ratio(tmp_path: Path) -> None:
    absent = str(tmp_path / "no-venv" / "bin" / "python")
    code = bench_peers.main([
        "--out", str(tmp_path), "--quick", "--timeout", "300",
        "--regrow-python", sys.executable, "--selfheal-python", absent, "--codesuture-python", absent,
    ])
    assert code == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["schema"] == peers_summary.SCHEMA
    assert set(summary) == {"schema", "generated", "host", "sections", "ratios", "missing"}
    assert set(summary["sections"]) == {"overhead", "sandbox", "cache", "validation", "repair"}
    for ratio in summary["ratios"]:
        assert set(ratio) == {"section", "name", "venv", "python", "value"}
        assert isinstance(ratio["value"], float) and ratio["value"] > 0
    names = {(ratio["section"], ratio["name"]) for ratio in summary["ratios"]}
    assert ("overhead", "regrow / plain") in names
    assert ("sandbox", "regrow fork / fork+exit (bare)") in names
    assert ("cache", "second repair (cache) / first repair") in names
    missing = {(entry["section"], entry["name"]): entry["reason"] for entry in summary["missing"]}
    assert "no venv python" in missing[("overhead", "selfheal")]
    assert "no venv python" in missing[("overhead", "codesuture")]
    assert "no venv python" in missing[("sandbox", "selfheal")]
    assert "no mutmut executable" in missing[("validation", "mutmut mutants/s (regrow)")]
    (validation,) = summary["sections"]["validation"]
    assert validation["rows"]["regrow candidates/s"] > 0 and validation["counts"]["regrow candidates"] > 0
    assert "no base URL" in missing[("repair", "healing-agent (regrow)")]
    (repair,) = [run for run in summary["sections"]["repair"] if run["venv"] == "regrow"]
    assert repair["rows"]["regrow model calls"] == 1.0  # the scripted reply is the fix: one call
    assert isinstance(repair["rows"]["regrow"], float)
    svg = (tmp_path / "peers-ratios.svg").read_text()
    assert svg.startswith("<svg") and svg.count('class="bar"') == len(summary["ratios"]) >= 3


def test_a_missing_row_is_listed_not_divided() -> None:
    runs = [
        {"section": "overhead", "venv": "v", "python": "3.12.1", "unit": "ns/call", "baseline": "plain",
         "rows": {"plain": 50.0, "regrow": 100.0, "healing-agent": "missing: ModuleNotFoundError: healing_agent"}},
        {"section": "sandbox", "venv": "w", "missing": "probe exited 1: boom"},
    ]
    summary = peers_summary.summarize(runs)
    assert summary["ratios"] == [
        {"section": "overhead", "name": "regrow / plain", "venv": "v", "python": "3.12.1", "value": 2.0}
    ]
    assert summary["missing"] == [
        {"section": "overhead", "name": "healing-agent (v)", "reason": "missing: ModuleNotFoundError: healing_agent"},
        {"section": "sandbox", "name": "w", "reason": "probe exited 1: boom"},
    ]
    assert peers_summary.chart(summary["ratios"]).count('class="bar"') == 1
    assert "missing: ModuleNotFoundError" in peers_summary.table(summary)


def test_a_probe_that_fails_is_missing_with_its_reason(tmp_path: Path) -> None:
    failing = tmp_path / "python"
    failing.write_text("#!/bin/sh\necho 'peer import blew up' >&2\nexit 3\n")
    failing.chmod(0o755)
    run = bench_peers.probe("overhead", "broken", str(failing), "regrow", quick=True, timeout=60)
    assert run == {"section": "overhead", "venv": "broken", "missing": "probe exited 3: peer import blew up"}
