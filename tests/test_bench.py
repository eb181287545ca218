"""``regrow bench`` on a tiny suite with one task per status it must tell apart."""

from __future__ import annotations

import importlib.util
import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from regrow._bench._manifest import load
from regrow._bench._report import summarise
from regrow._cli import main
from regrow._errors import RegrowError

SUITE = Path(__file__).parent / "bench_suite" / "manifest.toml"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str, Path]:
    suite = tmp_path_factory.mktemp("suite") / "tiny"
    shutil.copytree(SUITE.parent, suite)
    # Written here, not kept in the repository, where linters would trip over it.
    (suite / "programs" / "broken_syntax.py").write_text("def broken_syntax(x)\n    return x\n")
    out = tmp_path_factory.mktemp("bench")
    printed = io.StringIO()
    manifest = str(suite / "manifest.toml")
    assert main(["bench", manifest, "--jobs", "2", "--timeout", "30", "--out", str(out)], out=printed) == 0
    return json.loads((out / "results.json").read_text()), printed.getvalue(), out


def test_each_task_ends_with_its_own_status(run: tuple[dict[str, Any], str, Path]) -> None:
    data, _, _ = run
    statuses = {task["name"]: task["status"] for task in data["tasks"]}
    assert statuses == {
        "with_tax": "fixed",
        "already_right": "nothing-to-fix",
        "median": "not-fixed",  # a wrong algorithm: no single edit fixes it, and none is claimed
        "broken_syntax": "bad-target",
        "wrong_reference": "reference-fails",
        "coin_flip": "flaky",
    }


def test_a_fix_is_judged_against_the_reference(run: tuple[dict[str, Any], str, Path]) -> None:
    data, _, _ = run
    fixed = next(task for task in data["tasks"] if task["name"] == "with_tax")
    assert fixed["correct"] is True
    assert "+    return round(price + price * rate / 100, 2)" in fixed["patch"]
    assert fixed["operator"] == "binary-op" and fixed["tier"] == 1
    assert 0 < fixed["confidence"] <= 1 and fixed["candidates"] >= 1 and fixed["time"] > 0
    assert "syntax error" in next(t for t in data["tasks"] if t["name"] == "broken_syntax")["reason"]


def test_summary_table_and_html_report(run: tuple[dict[str, Any], str, Path]) -> None:
    data, printed, out = run
    summary = data["summary"]
    assert (summary["fixable"], summary["fixed"], summary["correct"], summary["wrong_claims"]) == (2, 1, 1, 0)
    assert "with_tax" in printed and "fixed 1/2 fixable tasks" in printed
    page = (out / "report.html").read_text()
    assert "<svg" in page and "<script" not in page and "with_tax" in page


def test_a_wrong_claim_on_an_unfixable_task_is_counted() -> None:
    results = [{"name": "a", "status": "fixed", "fixable": False, "correct": False, "time": 1.0},
               {"name": "b", "status": "fixed", "fixable": True, "correct": True, "time": 3.0}]
    summary = summarise(results)
    assert summary["wrong_claims"] == 1 and summary["fixed_percent"] == 100.0 and summary["median_seconds"] == 2.0


def test_an_llm_run_without_a_model_is_refused_before_any_task(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["bench", str(SUITE), "--proposer", "chain", "--out", str(tmp_path)], out=io.StringIO())
    assert code == 2
    assert "--proposer chain needs --model" in capsys.readouterr().err
    assert not (tmp_path / "results.json").exists()


def test_a_build_without_llm_proposers_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *args: None)
    code = main(["bench", str(SUITE), "--proposer", "llm", "--model", "openai:x", "--out", str(tmp_path)],
                out=io.StringIO())
    assert code == 2
    assert "regrow._llm is missing" in capsys.readouterr().err


def test_bad_manifests_are_refused(tmp_path: Path) -> None:
    manifest = tmp_path / "m.toml"
    manifest.write_text("[[task]]\nname = 'x'\n")
    with pytest.raises(RegrowError, match="needs target"):
        load(manifest)
    manifest.write_text("not toml [")
    with pytest.raises(RegrowError, match="not valid TOML"):
        load(manifest)
    suite = load(SUITE)
    assert suite.name == "tiny" and Path(suite.tasks[0].root) == SUITE.parent
