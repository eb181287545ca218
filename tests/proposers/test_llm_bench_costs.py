"""``make bench-llm``'s cost columns: first-token latency, tokens/s and tokens per correct fix from the
model server's request log, and which request each of regrow's fixes came from."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "llm"
sys.path.insert(0, str(BENCH))

import costs  # noqa: E402
import run  # noqa: E402


def record(prompt: str, reply: str, seconds: float, ttft: float, tokens: int) -> dict[str, object]:
    return {"prompt_sha256": prompt, "reply": reply, "seconds": seconds, "ttft": ttft, "prompt_tokens": 100,
            "completion_tokens": tokens}


def test_call_stats_time_the_first_token_and_the_rest() -> None:
    records = [record("a", '{"line": 2}', 3.0, 1.0, 20), record("b", "no code", 12.0, 2.0, 50)]
    stats = run.call_stats(records, "f", None, "def f():\n    return 1\n")
    assert stats["timed"] == 2 and stats["first_token_ms"] == 3000 and stats["generating_ms"] == 12000
    assert stats["generated"] == 70
    assert costs.speed(Counter(stats)) == {"first_token_seconds": 1.5, "tokens_per_second": 5.8}


def test_no_timed_calls_report_no_speed() -> None:
    assert costs.speed(Counter()) == {"first_token_seconds": None, "tokens_per_second": None}


def test_each_fix_is_put_down_to_its_request() -> None:
    rows = [
        {"system": "regrow-chain", "fix": True, "operator": "call 1 locate: suggested"},
        {"system": "regrow-chain", "fix": True, "operator": "call 2"},
        {"system": "regrow-chain", "fix": True, "operator": "choose: candidate 2"},
        {"system": "regrow-chain", "fix": True, "operator": "binary-op"},
        {"system": "regrow-chain", "fix": False, "operator": None},
        {"system": "self-heal", "fix": True, "operator": None},
        {"system": "regrow-chain", "fix": True, "operator": "call 1 choose: candidate 2", "via": "choose"},
    ]
    assert [costs.fix_source(r) for r in rows] == ["locate", "rewrite", "choose", "engine", "", "", "choose"]


def test_chain_mode_on_the_whole_suites_counts_each_fix_by_its_request() -> None:
    import whole

    engine = {"regrow40": {"results": [{"name": "a", "status": "correct"}, {"name": "b", "status": "abstained"},
                                       {"name": "c", "status": "not-fixed"}, {"name": "d", "status": "not-fixed"},
                                       {"name": "e", "status": "wrong"}]},
              "engine2": {"results": [{"name": "f", "status": "abstained"}]}}
    residue = [{"suite": "regrow40", "task": "c", "status": "correct", "operator": "call 1 locate: suggested"},
               {"suite": "regrow40", "task": "d", "status": "not-fixed", "operator": None}]
    runs = [{"suite": "regrow40", "task": "b", "status": "correct", "via": "choose"},
            {"suite": "engine2", "task": "f", "status": "abstained", "operator": None}]
    engine["engine2"]["results"].append({"name": "g", "status": "not-fixed"})  # not selected: no model run
    data = whole.summary(engine, residue, runs, {"b": 100, "c": 500, "d": 900, "f": 50})
    assert data["suites"]["regrow40"] == {"tasks": 5, "correct engine": 1, "correct choose": 1, "correct locate": 1,
                                          "not-fixed": 1, "wrong engine": 1, "abstained, asked the model": 1,
                                          "tokens": 1500}
    assert data["suites"]["engine2"] == {"tasks": 2, "abstained": 1, "abstained, asked the model": 1, "tokens": 50,
                                         "not run": 1}
    assert data["total"]["tasks"] == 7 and data["total"]["tokens"] == 1550
    table = "\n".join(whole.markdown(data))
    assert "| regrow40 | 5 | 1 | 1 | 1 | 0 | 1 |" in table and "| all | 7 |" in table
    assert "b correct" in table and "f abstained" in table


def test_the_abstained_tasks_with_a_reference_are_run_in_chain_mode() -> None:
    import whole

    engine = {"regrow40": {"results": [{"name": "a", "status": "abstained"}, {"name": "b", "status": "abstained"},
                                       {"name": "c", "status": "not-fixed"}]}}
    tasks = {"a": {"name": "a", "reference": "r.py::a"}, "b": {"name": "b"}, "c": {"name": "c", "reference": "r"}}

    def candidates(suite: str, sample: int) -> tuple[list[dict[str, object]], str]:
        return list(tasks.values()), "every task"

    assert whole.abstained_tasks(engine, candidates, 48) == [{"name": "a", "reference": "r.py::a",
                                                               "suite": "regrow40"}]


def test_a_run_that_breaks_is_an_error_row_not_the_end_of_the_benchmark(tmp_path: Path) -> None:
    task = {"name": "t", "suite": "regrow40"}
    row = run.model_run("regrow-chain", task, run.bench_row, tmp_path / "missing.toml", tmp_path / "work", "chain",
                        task, 5.0, {}, "openai:m")
    assert row["status"] == "error" and row["reason"].startswith("RuntimeError: regrow bench exited")
    assert (row["system"], row["task"], row["suite"]) == ("regrow-chain", "t", "regrow40") and row["wall"] >= 0
    ok = run.model_run("self-heal", task, lambda status: {"status": status}, "not-fixed")
    assert ok["status"] == "not-fixed" and ok["system"] == "self-heal"


def total(prices):  # type: ignore[no-untyped-def]
    return sum(prices) * 2


def test_each_request_is_told_by_who_asked_it_whatever_its_sections() -> None:
    import formats

    from regrow._evidence._failure import check_failure
    from regrow._proposers._llm import proposer_for
    from regrow._proposers._llm._prompt import build_prompt
    from regrow._proposers._llm._proposer import _Run
    from regrow._proposers._llm._strategy import Strategy
    from regrow.extend import Request, Target

    target = Target.of(total)
    request = Request(target, check_failure("test", total, "test_total failed: assert 12 == 6"), [], [], 1, 1e12)
    proposer = proposer_for("openai:qwen2.5-coder-1.5b-instruct", api_key="k", base_url="http://127.0.0.1:9/v1")
    strategy = _Run(proposer, request).ladder.current()
    kinds = {}
    for name, shown in (("whole", Strategy("whole", compact=True)), ("first", strategy)):
        prompt = build_prompt(request, [], proposer.prompt_options, None, shown)
        kinds[name] = formats.asked({"messages": [{"content": prompt.system}, {"content": prompt.user}]})
    assert kinds == {"whole": "whole", "first": "rewrite"}  # a compact request, with or without "## The failure"
    self_heal = {"messages": [{"content": "You are a Python code repair expert. Given a function and its error"},
                              {"content": "Function:\ndef total(prices): ..."}]}
    assert formats.asked(self_heal) == "self-heal"
