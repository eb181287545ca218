"""``regrow bench`` on a tiny suite with one task per status it must tell apart."""

from __future__ import annotations

import importlib.util
import io
import json
import re
import shutil
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from llm_servers import OpenAIServer, Text, greedy

from regrow._checks._inputs import Call, optional_parameters, seal_all, widen
from regrow._cli._bench._judge import DEFAULT_MIN_CALLS, jobs, judge
from regrow._cli._bench._manifest import load
from regrow._cli._bench._report import summarise
from regrow._cli._main import main
from regrow._errors import RegrowError
from regrow._sandbox._warm import Worker
from regrow._target._target import Target

SUITE = Path(__file__).parents[1] / "bench_suite" / "manifest.toml"


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the tiny suite; its manifest."""
    folder = tmp_path_factory.mktemp("suite") / "tiny"
    shutil.copytree(SUITE.parent, folder)
    # Written here, not kept in the repository, where linters would trip over it.
    (folder / "programs" / "broken_syntax.py").write_text("def broken_syntax(x)\n    return x\n")
    return folder / "manifest.toml"


def bench(manifest: Path, out: Path, *options: str) -> tuple[dict[str, Any], str]:
    """``regrow bench`` as the command line runs it: the results.json it wrote, and what it printed.

    The status is 2 exactly when a task is broken (a bad target or tests, a failing reference)."""
    printed = io.StringIO()
    status = main(["bench", str(manifest), "--jobs", "2", "--timeout", "30", "--out", str(out), *options],
                  out=printed)
    data = json.loads((out / "results.json").read_text())
    broken = any(task["status"] in ("bad-target", "bad-tests", "reference-fails") for task in data["tasks"])
    assert status == (2 if broken else 0), status
    return data, printed.getvalue()


@pytest.fixture(scope="module")
def run(suite: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str, Path]:
    out = tmp_path_factory.mktemp("bench")
    data, printed = bench(suite, out)
    return data, printed, out


def task(data: dict[str, Any], name: str) -> dict[str, Any]:
    return next(task for task in data["tasks"] if task["name"] == name)


def test_each_task_ends_with_its_own_status(run: tuple[dict[str, Any], str, Path]) -> None:
    data, _, _ = run
    statuses = {task["name"]: task["status"] for task in data["tasks"]}
    assert statuses == {
        "with_tax": "correct",
        "already_right": "nothing-to-fix",
        "median": "not-fixed",  # a wrong algorithm: no single edit fixes it, and none is claimed
        "broken_syntax": "bad-target",
        "wrong_reference": "reference-fails",
        "coin_flip": "flaky",
        "weak_prime": "abstained",  # the tests let fixes that disagree through: none is installed
        "unbox": "correct",  # one call, but the judge varies the Box's number field
        "shared_state": "correct",  # order-dependent tests, judged each candidate in a fresh process
    }


def test_the_run_leaves_no_compiled_modules_in_the_suite_s_folders(
        suite: Path, run: tuple[dict[str, Any], str, Path]) -> None:
    # the task processes keep compiled modules, in a pycache prefix of the run (see _runner._environment)
    assert not list(suite.parent.rglob("__pycache__")) and not list(suite.parent.rglob("*.pyc"))


def test_a_not_fixed_task_says_which_limit_stopped_the_engine(run: tuple[dict[str, Any], str, Path]) -> None:
    data, _, _ = run
    reason = task(data, "median")["reason"]  # docs/engine.md: the bench puts the stop reason in each not-fixed task
    assert "(engine: " in reason and any(
        words in reason for words in ("search space exhausted", "candidate budget of", "time budget spent")), reason


def test_a_test_that_reads_state_another_changed_is_not_called_flaky(run: tuple[dict[str, Any], str, Path]) -> None:
    data, _, _ = run
    shared = task(data, "shared_state")
    assert shared["status"] == "correct", shared
    assert shared["order"] == ("checks/check_shared_state.py::test_starts_empty reads state that "
                               "checks/check_shared_state.py::test_register changed"), shared["order"]
    # a test that fails on every other run even alone in a fresh process stays flaky
    assert task(data, "coin_flip")["status"] == "flaky"


def test_a_fix_is_judged_against_the_reference(run: tuple[dict[str, Any], str, Path]) -> None:
    data, _, _ = run
    fixed = task(data, "with_tax")
    assert fixed["status"] == "correct" and fixed["correct"] is True
    assert "+    return round(price + price * rate / 100, 2)" in fixed["patch"]
    assert fixed["operator"] == "binary-op" and fixed["tier"] == 1
    assert 0 < fixed["confidence"] <= 1 and fixed["candidates"] >= 1 and fixed["time"] > 0
    # Judged on the tests' three calls and many more made from them, never on one.
    assert fixed["judged_calls"] >= DEFAULT_MIN_CALLS
    assert fixed["agreement"] == f"{fixed['judged_calls']}/{fixed['judged_calls']}"
    assert fixed["inputs"]["given"] == 3 and fixed["inputs"]["generated"] >= DEFAULT_MIN_CALLS
    assert "syntax error" in task(data, "broken_syntax")["reason"]


def test_fixes_that_pass_weak_tests_and_disagree_are_not_installed(run: tuple[dict[str, Any], str, Path]) -> None:
    data, printed, _ = run
    abstained = task(data, "weak_prime")
    # Every (composite-only) test passes several edits that disagree on primes: the engine abstains, and
    # the best ranked of them, judged as if installed, is wrong: the abstention kept a wrong fix out.
    assert abstained["status"] == "abstained" and "patch" not in abstained
    assert abstained["reason"].startswith("ambiguous: ") and len(abstained["ambiguous"]["candidates"]) >= 2
    best = abstained["abstained_best"]
    assert best["status"] == "wrong"
    counterexample = best["counterexample"]  # whichever wrong edit the engine ranks first, a call shows it
    assert re.search(r"reference returned (True|False), fix returned (True|False)", counterexample), counterexample
    assert "abstained 1 (candidates disagreed; the best ranked would have been correct 0, wrong 1)" in printed


def test_one_call_on_an_object_is_judged_on_its_fields(run: tuple[dict[str, Any], str, Path]) -> None:
    data, _, _ = run
    judged = task(data, "unbox")
    assert judged["status"] == "correct" and judged["correct"] is True and judged["patch"]
    assert judged["judged_calls"] >= DEFAULT_MIN_CALLS and judged["inputs"]["given"] == 1
    assert judged["inputs"]["generated"] >= DEFAULT_MIN_CALLS - 1  # Box(0), Box(2), Box(-2), Box(10), ...


def test_summary_table_and_html_report(run: tuple[dict[str, Any], str, Path]) -> None:
    data, printed, out = run
    summary = data["summary"]
    assert (summary["fixable"], summary["fixed"], summary["wrong_claims"]) == (5, 3, 0)
    assert (summary["correct"], summary["wrong"], summary["unjudged"], summary["checked"]) == (3, 0, 0, 3)
    assert (summary["abstained"], summary["abstained_correct"], summary["abstained_wrong"]) == (1, 0, 1)
    assert "with_tax" in printed and "fixed 3/5 fixable tasks" in printed
    assert summary["fixed_via"] == {"engine": 3, "locate": 0, "rewrite": 0, "choose": 0}
    assert "fixes by request: engine 3, locate 0, rewrite 0, choose 0" in printed
    assert "correct 3, wrong 0, unjudged 0 of 3" in printed
    page = (out / "report.html").read_text()
    assert "<svg" in page and "<script" not in page and "with_tax" in page
    assert "unjudged <b>0</b>" in page
    assert "fixes by request: engine 3, locate 0, rewrite 0, choose 0" in page


def test_a_model_s_wrong_fix_is_reported_wrong(suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The issue's own case: the primality loop's bound `n ** 0.5` widened to `n + 0.5` passes the
    # weak tests, and agrees with the reference on ±1 of their inputs; a prime shows it is wrong.
    wide = Path(suite.parent / "programs" / "weak_prime.py").read_text().replace("(3, int(n ** 0.5)",
                                                                               "(3, int(n + 0.5)")
    with OpenAIServer() as server:
        server.add(*[Text(f"```python\n{wide}```")] * 3)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        data, _ = bench(suite, tmp_path, "--proposer", "llm", "--model", "openai:gpt-test", "--task", "weak_prime")
    wrong = task(data, "weak_prime")
    assert "+    for divisor in range(3, int(n + 0.5) + 1):" in wrong["patch"]
    assert wrong["status"] == "wrong" and wrong["correct"] is False
    assert wrong["counterexample"] == "f(3): reference returned True, fix returned False"


DOUBLING = {  # a suite of one task whose one test lets two fixes through: `n * 2` and `n + 3`
    "manifest.toml": '[suite]\nname = "doubling"\nroot = "."\n\n[[task]]\nname = "double"\n'
                     'target = "programs/double.py::double"\ntests = ["checks/check_double.py"]\n'
                     'reference = "reference/double.py::double"\nfixable = true\n',
    "programs/double.py": 'def double(n):\n    """Twice n."""\n    return n + 2\n',
    "reference/double.py": 'def double(n):\n    """Twice n."""\n    return n * 2\n',
    "checks/check_double.py": "from programs.double import double\n\n\ndef test_three():\n"
                              "    assert double(3) == 6\n",
}


def test_chain_mode_says_which_request_made_each_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, text in DOUBLING.items():
        (tmp_path / "suite" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "suite" / name).write_text(text)

    def decide(system: str, user: str, params: dict[str, Any]) -> str:
        assert "settle an ambiguous repair" in system, system  # the engine abstained; the model chooses
        blocks = re.findall(r"## Candidate (\d+)\n```python\n(.*?)```", user, re.S)
        return json.dumps({"choice": next(int(n) for n, code in blocks if "n * 2" in code)})

    with OpenAIServer() as server:
        server.add(greedy(decide))
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        data, printed = bench(tmp_path / "suite" / "manifest.toml", tmp_path / "out", "--proposer", "chain",
                              "--model", "openai:gpt-test")
        assert len(server.requests) == 1
    chosen = task(data, "double")
    assert chosen["status"] == "correct" and chosen["via"] == "choose", chosen.get("reason")
    assert data["summary"]["fixed_via"] == {"engine": 0, "locate": 0, "rewrite": 0, "choose": 1}
    assert "fixes by request: engine 0, locate 0, rewrite 0, choose 1" in printed


def test_fixes_are_counted_by_the_request_that_made_them() -> None:
    fixed = [{"name": n, "status": "correct", "fixable": True, "via": via}
             for n, via in enumerate(["engine", "locate", "choose", "choose", "", "other"])]
    assert summarise(fixed)["fixed_via"] == {"engine": 1, "locate": 1, "rewrite": 0, "choose": 2, "other": 2}
    assert summarise([{"name": "x", "status": "not-fixed", "via": "engine"}])["fixed_via"] == {
        "engine": 0, "locate": 0, "rewrite": 0, "choose": 0}


def test_the_calls_a_judgement_needs_come_from_the_command_line(suite: Path, tmp_path: Path) -> None:
    data, printed = bench(suite, tmp_path, "--task", "with_tax", "--min-calls", "100000")
    fixed = task(data, "with_tax")
    assert fixed["status"] == "unjudged" and fixed["judged_calls"] >= DEFAULT_MIN_CALLS
    assert "fewer than the 100000" in fixed["reason"] and data["options"]["min_calls"] == 100000
    assert "unjudged 1 of 1" in printed


def test_the_inputs_made_from_a_call_are_wide() -> None:
    def shown(made: list[Call]) -> list[str]:
        return [call.shown() for call in made]

    made = shown(widen([Call((5, "ab", [3, 1]), {"scale": 1.5})], limit=1000,
                       optional=optional_parameters(lambda n, text=None, items=(), *, scale=1.0: None)))
    for number in (0, 2, -2, 7, 10, 100, 10, -5):  # landmarks, n * 2, -n
        assert f"{number}, 'ab', [3, 1], scale=1.5" in made
    for text in ("''", "'a'", "'abab'", "'AB'", "' ab '", "None"):  # empty, one character, doubled, ...
        assert f"5, {text}, [3, 1], scale=1.5" in made
    for items in ("[]", "[3]", "[3, 1, 3, 1]", "[1, 3]", "None"):  # ..., longer, reversed and sorted
        assert f"5, 'ab', {items}, scale=1.5" in made
    assert "5, 'ab', [3, 1], scale=None" in made and "5, 'ab', [3, 1], scale=-1.5" in made
    assert "None, 'ab', [3, 1], scale=1.5" not in made  # n has no default: never None
    assert len(made) == len(set(made)) and "5, 'ab', [3, 1], scale=1.5" not in made  # none repeated, none given
    assert widen([Call((object(),), {})]) == []  # an opaque object has no variations
    # A number inside a text, another size: each of the first three runs of digits as 99 (9s) and as 0
    texts = shown(widen([Call(("$3.01 x1234 5 6",), {})], limit=1000))
    for text in ("'$99.01 x1234 5 6'", "'$3.99 x1234 5 6'", "'$3.01 x9999 5 6'", "'$0.01 x1234 5 6'",
                 "'$3.0 x1234 5 6'", "'$3.01 x0 5 6'"):
        assert text in texts
    assert not [text for text in texts if "99 6'" in text]  # the fourth run is left as it is


PARSE = """
def parse_count(text):
    return int(text) + 1


def reference(text):
    value = int(text)  # ValueError on "abc", TypeError on None
    while value < 0:  # never returns on a negative count
        pass
    return value
"""


@pytest.fixture
def judging(make_module: Callable[[str], types.ModuleType]) -> Any:
    module = make_module(PARSE)
    given = seal_all([Call((text,), {}) for text in ("12", "-3", "abc", None)])
    with Worker(jobs(Target.of(module.parse_count), module.reference)) as worker:
        yield lambda fix: judge(worker, fix, given, min_calls=5, budget=30.0)


def test_where_the_reference_raises_the_exception_type_is_compared(judging: Any) -> None:
    same = judging("def parse_count(text):\n    value = int(text)\n    return value if value >= 0 else -1\n")
    assert same["status"] == "correct" and same["judged_calls"] >= 5
    other = judging("def parse_count(text):\n    value = int(text.strip())\n    return value if value >= 0 else -1\n")
    assert other["status"] == "wrong"
    assert other["counterexample"] == "f(None): reference raised TypeError, fix raised AttributeError"


def test_where_the_reference_times_out_the_call_is_left_out(judging: Any) -> None:
    # The fix returns -1 on negative counts, where the reference never returns: not a difference.
    verdict = judging("def parse_count(text):\n    value = int(text)\n    return value if value >= 0 else -1\n")
    assert verdict["status"] == "correct" and verdict["inputs"]["reference_timeout"] >= 1
    assert verdict["judged_calls"] == verdict["inputs"]["given"] + verdict["inputs"]["generated"] - \
        verdict["inputs"]["reference_timeout"]


def test_a_fix_that_kills_the_worker_where_the_reference_returns_is_wrong(judging: Any) -> None:
    verdict = judging("def parse_count(text):\n    if text == '12':\n        __import__('os')._exit(3)\n"
                      "    value = int(text)\n    return value if value >= 0 else -1\n")
    assert verdict["status"] == "wrong"
    assert verdict["counterexample"].startswith("f('12'): reference returned 12, fix ended the worker")
    assert verdict["judged_calls"] > 5  # the other calls of its chunk were judged one by one


STAMP = """
_count = [0]


def stamp(n):
    return (n, 0)


def reference(n):  # like an id salted with the clock: two runs in a row may agree, a later one not
    count = _count[0]
    _count[0] += 1
    return (n, count // 2)
"""


def test_a_difference_counts_only_if_the_reference_still_says_the_same_after_the_fix_ran(
        make_module: Callable[[str], types.ModuleType]) -> None:
    module = make_module(STAMP)
    given = seal_all([Call((n,), {}) for n in (1, 2, 3)])
    with Worker(jobs(Target.of(module.stamp), module.reference)) as worker:
        verdict = judge(worker, "def stamp(n):\n    return (n, -1)\n", given, min_calls=1, budget=30.0)
    # The first call's two reference runs agreed (0, 0); the fix said -1; the reference's third run said 1:
    # no call counts, and the fix is not called wrong on the reference's change of mind.
    assert verdict["status"] == "unjudged", verdict
    assert verdict["inputs"]["reference_inconsistent"] >= 3


def test_a_wrong_claim_on_an_unfixable_task_is_counted() -> None:
    results = [{"name": "a", "status": "wrong", "fixable": False, "correct": False, "time": 1.0},
               {"name": "b", "status": "correct", "fixable": True, "correct": True, "time": 3.0}]
    summary = summarise(results)
    assert summary["wrong_claims"] == 1 and summary["fixed_percent"] == 100.0 and summary["median_seconds"] == 2.0
    # Results written before fixes had statuses of their own read the same way.
    old = [{**r, "status": "fixed"} for r in results]
    assert {k: summarise(old)[k] for k in ("wrong_claims", "correct")} == {"wrong_claims": 1, "correct": 1}


def test_each_task_reports_its_candidates_per_second(run: tuple[dict[str, Any], str, Path]) -> None:
    data, printed, _ = run
    engine = task(data, "with_tax")["engine"]
    speed = task(data, "with_tax")["candidates_per_second"]
    assert speed is not None and speed > 0 and speed == engine["per_second"]
    assert task(data, "broken_syntax").get("candidates_per_second") is None  # no search: no speed
    assert data["summary"]["median_candidates_per_second"] is not None and "median per task" in printed


def test_the_summary_has_the_median_speed_per_task_and_the_tasks_at_the_time_budget() -> None:
    def engine(evaluated: int, seconds: float, stopped: str = "search space exhausted") -> dict[str, Any]:
        return {"evaluated": evaluated, "search_seconds": seconds, "stopped": stopped}

    results = [{"name": "a", "status": "correct", "engine": engine(100, 1.0)},
               {"name": "b", "status": "not-fixed", "engine": engine(10, 10.0, "time budget spent after 10")},
               {"name": "c", "status": "not-fixed", "engine": engine(30, 1.0)},
               {"name": "d", "status": "timeout"}, {"name": "e", "status": "bad-target"}]
    summary = summarise(results)
    # per task 100/s, 1/s, 30/s: the median is 30, where the pooled figure (140 in 12 s) is 11.7
    assert summary["median_candidates_per_second"] == 30.0 and summary["candidates_per_second"] == 11.7
    assert summary["at_time_budget"] == 2  # b's search stopped at the budget; d timed out
    assert summarise([])["median_candidates_per_second"] is None


def test_an_unjudged_fix_is_not_counted_correct() -> None:
    results = [{"name": "a", "status": "correct", "fixable": True, "correct": True, "time": 1.0},
               {"name": "b", "status": "unjudged", "fixable": True, "correct": None, "time": 1.0}]
    summary = summarise(results)
    assert (summary["fixed"], summary["correct"], summary["unjudged"], summary["correct_percent"]) == (2, 1, 1, 50.0)


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
    assert "regrow._proposers._llm is missing" in capsys.readouterr().err


def test_bad_manifests_are_refused(tmp_path: Path) -> None:
    manifest = tmp_path / "m.toml"
    manifest.write_text("[[task]]\nname = 'x'\n")
    with pytest.raises(RegrowError, match="needs target"):
        load(manifest)
    manifest.write_text("not toml [")
    with pytest.raises(RegrowError, match="not valid TOML"):
        load(manifest)
    manifest.write_text("[suite]\nmin_calls = 0\n[[task]]\ntarget = 'a.py::f'\ntests = ['t.py']\n")
    with pytest.raises(RegrowError, match="min_calls must be a whole number of at least 1"):
        load(manifest)
    manifest.write_text("[suite]\nmin_calls = 3\n[[task]]\ntarget = 'a.py::f'\ntests = ['t.py']\n"
                        "[[task]]\ntarget = 'a.py::g'\ntests = ['t.py']\nmin_calls = 20\n")
    assert [task.min_calls for task in load(manifest).tasks] == [3, 20]
    for bad in ("3", "'inputs.py'"):  # not text, or no ::NAME
        manifest.write_text(f"[[task]]\ntarget = 'a.py::f'\ntests = ['t.py']\ninputs = {bad}\n")
        with pytest.raises(RegrowError, match="inputs must be"):
            load(manifest)
    suite = load(SUITE)
    assert suite.name == "tiny" and Path(suite.tasks[0].root) == SUITE.parent
    assert all(task.min_calls is None for task in suite.tasks)


STEP = """
import dataclasses


@dataclasses.dataclass
class Step:
    size: int


def advance(pos, step):
    return pos + step.size + 1


def reference(pos, step):
    return pos + step.size
"""


def test_a_fix_wrong_only_at_magnitudes_the_tests_never_reach_is_judged_wrong(
        make_module: Callable[[str], types.ModuleType]) -> None:
    # The tests' steps are -1, 0 and 1; the fix differs from the reference only where |size| >= 2. The
    # judge varies the object's number field (and pairs of arguments), and finds it.
    module = make_module(STEP)
    given = seal_all([Call((pos, module.Step(size)), {}) for pos, size in ((0, 1), (5, 0), (3, -1))])
    fix = "def advance(pos, step):\n    return pos + (step.size if abs(step.size) < 2 else 1)\n"
    with Worker(jobs(Target.of(module.advance), module.reference)) as worker:
        verdict = judge(worker, fix, given, min_calls=DEFAULT_MIN_CALLS, budget=30.0)
        right = judge(worker, "def advance(pos, step):\n    return step.size + pos\n", given,
                      min_calls=DEFAULT_MIN_CALLS, budget=30.0)
    assert verdict["status"] == "wrong", verdict
    assert "Step(size=" in verdict["counterexample"]
    assert right["status"] == "correct" and right["judged_calls"] >= DEFAULT_MIN_CALLS


def test_dates_durations_and_pairs_are_varied() -> None:
    import datetime

    made = [call.shown() for call in widen([Call((datetime.date(2024, 1, 15), datetime.timedelta(days=1)), {})],
                                           limit=1000)]
    assert "datetime.date(2024, 2, 15), datetime.timedelta(days=1)" in made  # 31 days on
    assert "datetime.date(2024, 1, 15), datetime.timedelta(days=2)" in made
    assert any(shown.startswith("datetime.date(2024, 1, 16), datetime.timedelta(days=2)") for shown in made)  # a pair
    assert "3, 5" in [call.shown() for call in widen([Call((5, 3), {})])]  # swapped


def test_a_manifest_s_own_inputs_are_judged_on(tmp_path: Path) -> None:
    """``inputs = "inputs/dbl.py::INPUTS"``: the fix ``n * 2`` is right wherever the tests' calls and the inputs made
    from them reach, and wrong at 6000, which only the manifest's list holds."""
    for folder, text in (("programs", "def dbl(n):\n    return n * 3\n"),
                         ("reference", "def dbl(n):\n    return n * 2 if n < 5000 else 7\n"),
                         ("tests", "from programs.dbl import dbl\n\n\ndef test_dbl():\n    assert dbl(1) == 2\n"
                                   "    assert dbl(3) == 6\n"),
                         ("inputs", "INPUTS = [(6000,), (3,)]\n")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / ("test_dbl.py" if folder == "tests" else "dbl.py")).write_text(text)
    (tmp_path / "conftest.py").write_text("import os, sys\nsys.path.insert(0, os.path.dirname(__file__))\n")
    task = ("[[task]]\nname = 'dbl'\ntarget = 'programs/dbl.py::dbl'\ntests = ['tests/test_dbl.py']\n"
            "reference = 'reference/dbl.py::dbl'\nmin_calls = 2\n")
    (tmp_path / "plain.toml").write_text(task)
    (tmp_path / "listed.toml").write_text(task + "inputs = 'inputs/dbl.py::INPUTS'\n")
    plain, _ = bench(tmp_path / "plain.toml", tmp_path / "out-plain")
    listed, _ = bench(tmp_path / "listed.toml", tmp_path / "out-listed")
    assert plain["tasks"][0]["status"] == "correct"
    assert listed["tasks"][0]["status"] == "wrong", listed["tasks"][0]
    assert listed["tasks"][0]["counterexample"] == "f(6000): reference returned 7, fix returned 12000"
    # On the buggy version the test stops at its first assert: 3 is the list's, as 6000 is (1 is not listed twice)
    (tmp_path / "inputs" / "dbl.py").write_text("INPUTS = [(6000,), (1,)]\n")
    again, _ = bench(tmp_path / "listed.toml", tmp_path / "out-again")
    assert (plain["tasks"][0]["inputs"]["given"], listed["tasks"][0]["inputs"]["given"],
            again["tasks"][0]["inputs"]["given"]) == (1, 3, 2)
    (tmp_path / "inputs" / "dbl.py").write_text("INPUTS = 6000\n")  # not a list of tuples: the task stops at once
    broken, _ = bench(tmp_path / "listed.toml", tmp_path / "out-broken")
    assert broken["tasks"][0]["status"] == "bad-target" and "candidates" not in broken["tasks"][0]
    assert "must be a list of argument tuples" in broken["tasks"][0]["reason"]
