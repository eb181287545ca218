"""Chain mode on the whole suites, for ``make bench-llm``: where each fix came from.

The systems step runs chain mode on the engine's residue only (the tasks the engine did not fix).
On a whole suite, chain mode is the engine first and the model only where the engine stopped: on a
task the engine fixed, the model is never called (so the engine pass's verdict is chain mode's); on
a task where it abstained (several fixes pass every check and disagree), the model gets a choose
request; on the residue, a locate request and then rewrites. This step runs chain mode on the
abstained tasks (``OUT/whole.json``, its requests marked ``regrow-chain-whole|<task>`` in the same
request log), and :func:`summary` puts the three together per suite: correct and wrong fixes by the
request they came from (engine, choose, locate, rewrite), the tasks left unfixed, and the model's
tokens over all of it.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

from costs import fix_source

ABSTAINED = "abstained"
SYSTEM = "regrow-chain-whole"


def abstained_tasks(engine: dict[str, Any], candidates: Any, sample: int) -> list[dict[str, Any]]:
    """The engine pass's abstained tasks that have a reference, each suite's in the pass's order."""
    chosen = []
    for suite, summary in engine.items():
        tasks = {t["name"]: t for t in candidates(suite, sample)[0]}
        for result in summary.get("results", []):
            task = tasks.get(result["name"])
            if result["status"] == ABSTAINED and task is not None and task.get("reference"):
                chosen.append({**task, "suite": suite})
    return chosen


def run_whole(tasks: list[dict[str, Any]], args: Any, out: Path, run: Any) -> list[dict[str, Any]]:
    """Chain mode (``regrow bench --proposer chain``) on ``tasks`` against the model server; rows to
    ``OUT/whole.json`` as they finish. ``run`` is the driver module (its ``Server``, ``run_bench``)."""
    run.write_manifest(out / "whole.toml", "bench-llm-whole", tasks)
    rows: list[dict[str, Any]] = []
    server = run.Server(Path(args.model_file), args.port, out / "calls.jsonl", args.model_name, args.max_tokens,
                        out / "server-whole.log")
    env = {**os.environ, "OPENAI_BASE_URL": f"{server.url}/v1", "OPENAI_API_KEY": "not-needed"}
    try:
        for number, task in enumerate(tasks, start=1):
            server.mark(f"{SYSTEM}|{task['name']}")
            row = run.model_run(SYSTEM, task, run.bench_row, out / "whole.toml", out / "work" / SYSTEM / task["name"],
                                "chain", task, args.timeout, env, f"openai:{args.model_name}")
            rows.append(row)
            (out / "whole.json").write_text(json.dumps(rows, indent=1, default=str) + "\n", encoding="utf-8")
            print(f"  [whole {number}/{len(tasks)}] {task['name']} chain: {row['status']} ({row['wall']:.0f}s)",
                  flush=True)
        server.mark("end")
    finally:
        server.stop()
    return rows


def summary(engine: dict[str, Any], residue: list[dict[str, Any]], whole: list[dict[str, Any]],
            tokens: dict[str, int]) -> dict[str, Any]:
    """Per suite and in all: chain mode's correct and wrong fixes by the request they came from, and the
    tasks it left. ``residue`` are the systems step's regrow-chain rows, ``whole`` this step's rows;
    ``tokens`` the model tokens (in + out) per task of either."""
    later = {(row["suite"], row["task"]): row for row in [*residue, *whole]}
    suites: dict[str, Any] = {}
    total: Counter[str] = Counter()
    for suite, passed in engine.items():
        counts: Counter[str] = Counter()
        for result in passed.get("results", []):
            row = later.get((suite, result["name"]))
            if row is None and result["status"] in ("not-fixed", "timeout", ABSTAINED):
                status, where = "not run", ""  # the model would have been called: left out (over --tasks)
            elif row is None:  # the model is not called: the engine's verdict is chain mode's
                status, where = result["status"], "engine"
            elif row["status"] in ("correct", "wrong", "unjudged"):
                status, where = row["status"], fix_source({**row, "fix": True, "system": "regrow-chain"})
                counts["tokens"] += tokens.get(result["name"], 0)
            else:  # the model was called and no fix came of it
                status, where = row["status"], ""
                counts["tokens"] += tokens.get(result["name"], 0)
            counts["tasks"] += 1
            counts[f"{status} {where}".strip() if status in ("correct", "wrong", "unjudged") else status] += 1
            if row is not None and result["status"] == ABSTAINED:
                counts["abstained, asked the model"] += 1
        suites[suite] = dict(counts)
        total.update(counts)
    return {"suites": suites, "total": dict(total), "runs": whole}


def markdown(data: dict[str, Any]) -> list[str]:
    """The section of ``results.md`` for :func:`summary`'s figures."""
    if not data.get("runs") and not data.get("suites"):
        return []
    columns = [("tasks", "tasks"), ("correct engine", "correct: engine"), ("correct choose", "choose"),
               ("correct locate", "locate"), ("correct rewrite", "rewrite"), ("wrong engine", "wrong: engine"),
               ("wrong choose", "choose"), ("wrong locate", "locate"), ("wrong rewrite", "rewrite"),
               ("abstained", "abstained"), ("not-fixed", "not fixed"), ("timeout", "timeout"), ("error", "error"),
               ("not run", "not run (over --tasks)"),
               ("tokens", "model tokens")]
    lines = ["Chain mode on the whole suites (engine first; the model asked to choose where the engine abstained, "
             "to locate and rewrite where it found nothing; where the engine fixed a task the model is not called "
             "and the engine pass's verdict stands):", "",
             "| suite | " + " | ".join(title for _, title in columns) + " |",
             "| --- | " + " | ".join("---:" for _ in columns) + " |"]
    for suite, counts in [*data["suites"].items(), ("all", data["total"])]:
        lines.append(f"| {suite} | " + " | ".join(str(counts.get(key, 0)) for key, _ in columns) + " |")
    if data.get("runs"):
        lines += ["", "Where the engine abstained: " + ", ".join(
            f"{row['task']} {row['status']}" + (f" ({row['operator']})" if row.get("operator") else "")
            for row in data["runs"]) + "."]
    return [*lines, ""]
