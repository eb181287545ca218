"""``make bench-llm``: regrow's model path beside self-heal's, one local model, the engine-unfixable tasks.

    python benchmarks/llm/run.py all --model-file .cache/bench-llm/MODEL.gguf   # what make bench-llm runs
    python benchmarks/llm/run.py report                                          # the tables again, from OUT
    python benchmarks/llm/run.py rejudge                  # self-heal's fixes whose judging broke, judged again
    python benchmarks/llm/run.py whole --model-file ...   # chain mode on the engine's abstentions, then the report

Run in the bench environment (``.venv-bench-llm``: gpt4all, self-heal-llm, and regrow at the
measured commit). The steps:

1. **engine** — ``regrow bench --proposer engine`` on each suite's candidates: every task of
   regrow40, engine2 and engine2b, and a deterministic sample of the real-code suite (the first
   ``--realcode-sample`` tasks by sha256 of their names). Results are kept in
   ``OUT/engine/<suite>/`` and reused while regrow's code outside ``_llm`` and the candidates
   are unchanged.
2. **select** — the tasks the engine did not fix (``not-fixed`` or ``timeout``; each has a
   reference), each suite's in sha256-of-name order, taken round-robin over the suites until
   ``--tasks``. Written to ``OUT/tasks.toml``.
3. **systems** — the model server (``serve.py``) on loopback, then per task, in turn:
   ``regrow bench --proposer llm`` and ``--proposer chain`` (model ``openai:<name>`` at the
   server, ``--jobs 1``), and self-heal 0.5.0 with its own loop (``selfheal_task.py``), whose fix
   is then judged by ``judge_fix.py`` as regrow bench judges its own. The same model, decoding,
   reply cap and call budget (``--calls``, 3: regrow's default per session) for all three. Before
   each run the driver posts a mark to the server, so its request log splits by system and task.
4. **whole** — chain mode on the tasks the engine pass abstained on (``whole.py``: with the systems
   step's chain runs on the residue and the engine pass's own verdicts, chain mode on the whole suites,
   each fix counted by the request it came from).
5. **report** — ``OUT/results.json`` and ``OUT/results.md`` from the runs and the request log:
   per system the tasks, fixes, correct fixes, model calls, echoes (a reply whose function is the
   original's, up to formatting, comments and docstrings), repeats (a prompt already sent for the
   same task), tokens in and out, model time and wall time.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import hashlib
import importlib.metadata
import json
import os
import platform
import re
import signal
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
SYSTEMS = ("regrow-llm", "regrow-chain", "self-heal")
SUITES = ("regrow40", "engine2", "engine2b", "realcode")
UNFIXED = ("not-fixed", "timeout")
FIX_STATUSES = ("correct", "wrong", "unjudged", "fixed")


# -- manifests --------------------------------------------------------------------------------------------------------

def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)


def write_manifest(path: Path, name: str, tasks: list[dict[str, Any]]) -> str:
    """A manifest ``regrow bench`` reads, each task with its absolute root; returns its text."""
    lines = [f"# Written by benchmarks/llm/run.py: do not edit.\n[suite]\nname = {_toml_value(name)}\nroot = \".\"\n"]
    for task in tasks:
        lines.append("[[task]]")
        for key in ("name", "target", "tests", "root", "reference", "fixable", "family", "bug", "min_calls"):
            if task.get(key) is not None:
                lines.append(f"{key} = {_toml_value(task[key])}")
        lines.append("")
    text = "\n".join(lines)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return text


def load_tasks(manifest: Path) -> list[dict[str, Any]]:
    from regrow._cli._bench._manifest import load

    return [{**task.as_dict(), "suite_file": str(manifest)} for task in load(manifest).tasks]


def name_order(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()


def candidates(suite: str, sample: int) -> tuple[list[dict[str, Any]], str]:
    """The tasks of ``suite`` the engine pass runs on, and where they came from (or why none)."""
    if suite != "realcode":
        manifest = REPO / f"benchmarks/suites/{suite}/manifest.toml"
        if not manifest.exists():
            return [], f"benchmarks/suites/{suite} is not present"
        return load_tasks(manifest), "every task"
    manifest = REPO / ".cache/realcode/manifest.toml"
    if not manifest.exists():
        return [], ".cache/realcode/manifest.toml is missing (make bench-realcode materialises it)"
    tasks = sorted(load_tasks(manifest), key=lambda t: name_order(t["name"]))[:sample]
    return tasks, f"the first {sample} of {len(load_tasks(manifest))} tasks by sha256 of their names"


# -- running things ---------------------------------------------------------------------------------------------------

def regrow_bin() -> str:
    return str(Path(sys.executable).with_name("regrow"))


def run_bench(manifest: Path, out: Path, proposer: str, *, jobs: int, timeout: float, task: str | None = None,
              env: dict[str, str] | None = None, model: str | None = None) -> list[dict[str, Any]]:
    command = [regrow_bin(), "bench", str(manifest), "--proposer", proposer, "--jobs", str(jobs),
               "--timeout", str(timeout), "--out", str(out)]
    if task:
        command += ["--task", task]
    if model:
        command += ["--model", model]
    out.mkdir(parents=True, exist_ok=True)
    with (out / "bench.log").open("w", encoding="utf-8") as log:
        done = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, env=env, check=False, cwd=REPO)
    results = out / "results.json"
    if done.returncode != 0 or not results.exists():
        tail = (out / "bench.log").read_text(encoding="utf-8", errors="replace").strip().splitlines()[-3:]
        raise RuntimeError(f"regrow bench exited {done.returncode}: {' | '.join(tail)}")
    return list(json.loads(results.read_text(encoding="utf-8"))["tasks"])


def task_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1")
    return env


def run_script(script: str, spec: dict[str, Any], work: Path, cwd: str, timeout: float,
               python: str = sys.executable) -> dict[str, Any]:
    work.mkdir(parents=True, exist_ok=True)
    spec_path, result_path = work / f"{script}.spec.json", work / f"{script}.result.json"
    spec_path.write_text(json.dumps(spec, indent=1), encoding="utf-8")
    result_path.unlink(missing_ok=True)
    started = time.monotonic()
    with (work / f"{script}.log").open("w", encoding="utf-8") as log:
        try:
            process = subprocess.Popen([python, str(HERE / f"{script}.py"), str(spec_path), str(result_path)],
                                       cwd=cwd, env=task_env(), stdin=subprocess.DEVNULL, stdout=log,
                                       stderr=subprocess.STDOUT, start_new_session=True)
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            return {"status": "timeout", "reason": f"killed after {timeout:g}s",
                    "time": round(time.monotonic() - started, 3)}
    try:
        return dict(json.loads(result_path.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return {"status": "error", "reason": f"{script} exited {process.returncode} without a result",
                "time": round(time.monotonic() - started, 3)}


class Server:
    """serve.py on loopback for the duration of the runs."""

    def __init__(self, model_file: Path, port: int, log: Path, name: str, max_tokens: int, stderr: Path) -> None:
        self.url = f"http://127.0.0.1:{port}"
        self.name = name
        self.stderr = stderr.open("w", encoding="utf-8")
        self.process = subprocess.Popen(
            [sys.executable, str(HERE / "serve.py"), "--model", str(model_file), "--port", str(port), "--log", str(log),
             "--name", name, "--max-tokens", str(max_tokens)], stdout=self.stderr, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL)
        for _ in range(240):
            if self.process.poll() is not None:
                raise RuntimeError(f"the model server exited with {self.process.returncode} (see {stderr})")
            with contextlib.suppress(OSError):
                urllib.request.urlopen(f"{self.url}/health", timeout=2).read()
                return
            time.sleep(0.5)
        raise RuntimeError(f"the model server did not answer on {self.url} in 120s (see {stderr})")

    def mark(self, label: str) -> None:
        request = urllib.request.Request(f"{self.url}/bench/mark", json.dumps({"label": label}).encode(),
                                         {"Content-Type": "application/json"})
        urllib.request.urlopen(request, timeout=30).read()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.stderr.close()


# -- the steps --------------------------------------------------------------------------------------------------------

def engine_pass(out: Path, sample: int, commit: str) -> dict[str, Any]:
    """Every suite's candidates through the engine alone (reused while nothing changed)."""
    summary: dict[str, Any] = {}
    for suite in SUITES:
        tasks, origin = candidates(suite, sample)
        folder = out / "engine" / suite
        if not tasks:
            summary[suite] = {"candidates": 0, "origin": origin, "results": []}
            print(f"bench-llm: engine pass, {suite}: skipped ({origin})", flush=True)
            continue
        text = write_manifest(folder / "candidates.toml", f"{suite}-candidates", tasks)
        key = hashlib.sha256(f"{engine_code(commit)}\n{text}".encode()).hexdigest()
        stamp, results_file = folder / "key.txt", folder / "results.json"
        if stamp.exists() and stamp.read_text().strip() == key and results_file.exists():
            results = json.loads(results_file.read_text(encoding="utf-8"))["tasks"]
            print(f"bench-llm: engine pass, {suite}: {len(tasks)} tasks, reused from {results_file}", flush=True)
        else:
            print(f"bench-llm: engine pass, {suite}: {len(tasks)} tasks ({origin})", flush=True)
            started = time.monotonic()
            results = run_bench(folder / "candidates.toml", folder, "engine", jobs=2, timeout=60.0)
            stamp.write_text(key + "\n")
            print(f"bench-llm: engine pass, {suite}: done in {time.monotonic() - started:.0f}s", flush=True)
        summary[suite] = {"candidates": len(tasks), "origin": origin,
                          "statuses": dict(Counter(r["status"] for r in results)),
                          "results": [{"name": r["name"], "status": r["status"]} for r in results]}
    return summary


def engine_code(commit: str) -> str:
    """What the engine pass depends on: regrow's files at ``commit`` but the model proposers' (``_llm``),
    which ``--proposer engine`` never imports; the commit itself when git cannot say."""
    done = subprocess.run(["git", "ls-tree", "-r", commit, "src/regrow"], capture_output=True, text=True,
                          check=False, cwd=REPO)
    lines = [line for line in done.stdout.splitlines() if "\tsrc/regrow/_proposers/_llm/" not in line]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest() if done.returncode == 0 and lines else commit


def select(engine: dict[str, Any], limit: int, out: Path, sample: int) -> list[dict[str, Any]]:
    queues: list[list[dict[str, Any]]] = []
    for suite in SUITES:
        tasks = {t["name"]: t for t in candidates(suite, sample)[0]}
        unfixed = [tasks[r["name"]] for r in engine[suite]["results"]
                   if r["status"] in UNFIXED and r["name"] in tasks and tasks[r["name"]].get("reference")]
        queues.append([{**t, "suite": suite} for t in sorted(unfixed, key=lambda t: name_order(t["name"]))])
        engine[suite]["unfixed"] = len(unfixed)
    chosen: list[dict[str, Any]] = []
    while len(chosen) < limit and any(queues):
        for queue in queues:
            if queue and len(chosen) < limit:
                chosen.append(queue.pop(0))
    write_manifest(out / "tasks.toml", "bench-llm", chosen)
    (out / "tasks.json").write_text(json.dumps(chosen, indent=1) + "\n", encoding="utf-8")
    return chosen


def run_systems(tasks: list[dict[str, Any]], args: argparse.Namespace, out: Path) -> list[dict[str, Any]]:
    log = out / "calls.jsonl"
    rows_file = out / "runs.json"
    rows: list[dict[str, Any]] = []
    if args.resume and rows_file.exists():  # keep what finished; the log goes on (its marks keep runs apart)
        rows = [r for r in json.loads(rows_file.read_text(encoding="utf-8")) if r["status"] != "error"]
    elif log.exists():
        log.rename(out / f"calls-{int(log.stat().st_mtime)}.jsonl.old")
    done = {(r["system"], r["task"]) for r in rows}
    server = Server(Path(args.model_file), args.port, log, args.model_name, args.max_tokens, out / "server.log")
    base_url = f"{server.url}/v1"
    model = f"openai:{args.model_name}"
    env = {**os.environ, "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "not-needed"}
    try:
        for number, task in enumerate(tasks, start=1):
            for system in args.systems:
                if (system, task["name"]) in done:
                    continue
                server.mark(f"{system}|{task['name']}")
                work = out / "work" / system / task["name"]
                if system == "self-heal":
                    row = model_run(system, task, run_self_heal, task, args, work, base_url)
                else:
                    row = model_run(system, task, bench_row, out / "tasks.toml", work, system.split("-")[1], task,
                                    args.timeout, env, model)
                rows.append(row)
                rows_file.write_text(json.dumps(rows, indent=1, default=str) + "\n", encoding="utf-8")
                print(f"  [{number}/{len(tasks)}] {task['name']} {system}: {row['status']} ({row['wall']:.0f}s)",
                      flush=True)
        server.mark("end")
    finally:
        server.stop()
    return rows


def model_run(system: str, task: dict[str, Any], run: Callable[..., dict[str, Any]], *args: Any) -> dict[str, Any]:
    """One system's run of one task (``run(*args)`` makes its row), labelled and timed; an error ends the run,
    not the benchmark."""
    started = time.monotonic()
    try:
        row = run(*args)
    except Exception as exc:  # one broken run must not end the benchmark
        row = {"status": "error", "reason": f"{type(exc).__name__}: {exc}"}
    row.update(system=system, task=task["name"], suite=task["suite"], wall=round(time.monotonic() - started, 3))
    return row


def bench_row(manifest: Path, work: Path, proposer: str, task: dict[str, Any], timeout: float,
              env: dict[str, str], model: str) -> dict[str, Any]:
    """``regrow bench --proposer PROPOSER`` on one task of ``manifest`` against the model server: its row."""
    result = run_bench(manifest, work, proposer, jobs=1, timeout=timeout, task=task["name"], env=env, model=model)[0]
    return {"status": result["status"], "reason": result.get("reason", ""), "operator": result.get("operator"),
            "via": result.get("via"), "patch": result.get("patch"), "counterexample": result.get("counterexample"),
            "judged_calls": result.get("judged_calls"), "engine": result.get("engine") or {}}


def run_self_heal(task: dict[str, Any], args: argparse.Namespace, work: Path, base_url: str) -> dict[str, Any]:
    plain = {k: task[k] for k in ("name", "target", "tests", "root", "reference", "fixable", "family", "bug",
                                  "min_calls")}
    spec = {"task": plain, "model": args.model_name, "base_url": base_url, "calls": args.calls,
            "call_seconds": args.call_seconds}
    healed = run_script("selfheal_task", spec, work, task["root"], args.timeout, python=args.self_heal_python)
    row = {"status": "not-fixed" if healed["status"] == "not-fixed" else healed["status"],
           "reason": healed.get("reason", ""), "self_heal": healed}
    if healed["status"] == "fixed":
        judge_self_heal(row, plain, work)
    return row


def judge_self_heal(row: dict[str, Any], task: dict[str, Any], work: Path) -> None:
    """Judge the fix self-heal claims, as regrow bench judges its own (``judge_fix.py``), into ``row``."""
    judged = run_script("judge_fix", {"task": task, "source": row["self_heal"]["source"], "timeout": 120.0}, work,
                        task["root"], 180.0)
    row.update(status=judged["status"], judge=judged, counterexample=judged.get("counterexample"),
               judged_calls=judged.get("judged_calls"), claimed=True)


def rejudge(out: Path) -> list[str]:
    """Judge again the self-heal fixes whose judging ended in an error (the judge, not the fix: e.g. an
    internal of regrow bench it calls changed); the loop's own run is kept as it was."""
    rows_file = out / "runs.json"
    rows = json.loads(rows_file.read_text(encoding="utf-8"))
    tasks = {t["name"]: t for t in json.loads((out / "tasks.json").read_text(encoding="utf-8"))}
    again = []
    for row in rows:
        if row["system"] == "self-heal" and row.get("claimed") and row.get("judge", {}).get("status") == "error":
            plain = {k: tasks[row["task"]][k] for k in ("name", "target", "tests", "root", "reference", "fixable",
                                                        "family", "bug", "min_calls")}
            row["judge_error"] = row["judge"]
            judge_self_heal(row, plain, out / "work" / "self-heal" / row["task"])
            again.append(f"{row['task']}: {row['status']}")
    rows_file.write_text(json.dumps(rows, indent=1, default=str) + "\n", encoding="utf-8")
    return again


# -- the report -------------------------------------------------------------------------------------------------------

def _normal(node: ast.AST) -> str:
    node = ast.parse(ast.unparse(node)).body[0]  # a copy
    for item in ast.walk(node):
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = item.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                item.body = body[1:] or [ast.Pass()]
            if not isinstance(item, ast.ClassDef):
                item.decorator_list = []
    return ast.dump(node, include_attributes=False)


def original_function(task: dict[str, Any]) -> tuple[str, str | None, str]:
    """The target's name, its normal form (``None`` if it cannot be found) and its source, dedented."""
    import textwrap

    where, _, qualname = task["target"].partition("::")
    text = Path(task["root"], where).read_text(encoding="utf-8")
    tree = ast.parse(text)
    scope: list[ast.stmt] = tree.body
    *owners, name = qualname.split(".")
    for owner in owners:
        found = next((n for n in scope if isinstance(n, ast.ClassDef) and n.name == owner), None)
        if found is None:
            return name, None, ""
        scope = found.body
    node = next((n for n in scope if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name), None)
    if node is None:
        return name, None, ""
    lines = text.splitlines(keepends=True)[node.lineno - 1:node.end_lineno]
    return name, _normal(node), textwrap.dedent("".join(lines))


_FENCE = re.compile(r"(```+|~~~+)[^\n]*\n(.*?)\1", re.DOTALL)


def reply_function(reply: str, name: str, original: str = "") -> str | None:
    """The normal form of the function a reply makes: its local edits (SEARCH/REPLACE blocks, a unified
    diff) applied to the original, else the last definition of ``name`` in it (fenced blocks, else the
    whole text). ``None``: no function, or edits that do not apply.

    Edits are read and applied with regrow's own ``_edits`` module (the measured commit's), the
    one a regrow run used on the same replies.
    """
    import textwrap

    try:
        from regrow._proposers._llm._edits import EditError, apply, edits_in
    except ImportError:  # a regrow without local edits: whole functions only
        edits_in = None
    if edits_in is not None and original:
        try:
            found_edits = edits_in(reply)
            if found_edits is not None:
                made, _ = apply(original, found_edits[0])
                reply = f"```python\n{made}\n```"
        except (EditError, ValueError):
            return None
    found = None
    for block in [m.group(2) for m in _FENCE.finditer(reply)] or [reply]:
        for text in (block, textwrap.dedent(block)):
            try:
                tree = ast.parse(text)
            except (SyntaxError, ValueError):
                continue
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                    found = node
            break
    return _normal(found) if found is not None else None


def read_log(path: Path) -> dict[str, list[dict[str, Any]]]:
    """The requests of each run, by its mark's label; a label marked again (a run done again after an
    interrupted benchmark, ``--resume``) keeps only its last run's requests.

    A request belongs to the run that was current when it arrived (``arrived_label``). A log
    written before the server recorded that is read by time: a request logged after a mark whose
    generation had started before the mark (it was logged when it ended) belongs to the run before,
    and so does the client's retry of that same prompt right after it, abandoned too.
    """
    calls: dict[str, list[dict[str, Any]]] = {}
    if not path.exists():
        return calls
    current = previous = ""
    marked = 0.0
    moved: dict[str, Any] | None = None
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("kind") == "mark":
            previous, current, marked, moved = current, record["label"], float(record["ts"]), None
            calls[current] = []
        elif record.get("kind") == "chat" and record.get("label"):
            label = record.get("arrived_label") or record["label"]
            if "arrived_label" not in record and previous in calls:
                started = float(record["ts"]) - float(record.get("seconds", 0.0))
                retry = moved is not None and record.get("client_gone") and \
                    moved["prompt_sha256"] == record["prompt_sha256"]
                if started < marked or retry:
                    label, moved = previous, record
            calls.setdefault(label, []).append(record)
    return calls


def call_stats(records: list[dict[str, Any]], name: str, original: str | None, source: str) -> dict[str, Any]:
    """A run's requests: model calls, and how many were echoes, repeats, retries, cut off, without a function.

    *same_reply* counts a changed function the run had already received (a candidate sent again).
    A request with the prompt of the request just before it, which the client had abandoned (it
    stopped reading the stream: its own time limit), is the client's transport retry of the same
    call: counted as a retry, not as a call or a repeat. Any other prompt sent before in the run
    is a repeat. Tokens and model time count every request.
    """
    seen: set[str] = set()
    stats = Counter()
    previous: dict[str, Any] | None = None
    replies: set[str] = set()
    for record in records:
        stats["requests"] += 1
        retry = previous is not None and previous.get("client_gone") and \
            previous["prompt_sha256"] == record["prompt_sha256"]
        previous = record
        if retry:
            stats["retries"] += 1
        else:
            stats["calls"] += 1
            if record["prompt_sha256"] in seen:
                stats["repeats"] += 1
        seen.add(record["prompt_sha256"])
        if "error" in record:
            stats["errors"] += 1
            continue
        if record.get("client_gone"):  # the client never read the whole reply
            stats["abandoned"] += 1
        elif not retry:
            got = reply_function(record.get("reply", ""), name, source)
            if got is None:
                stats["no_function"] += 1
            elif original is not None and got == original:
                stats["echoes"] += 1
            elif got in replies:
                stats["same_reply"] += 1
            if got is not None:
                replies.add(got)
            if record.get("finish_reason") == "length":
                stats["cut_off"] += 1
        stats["tokens_in"] += record.get("prompt_tokens", 0)
        stats["tokens_out"] += record.get("completion_tokens", 0)
        stats["model_ms"] += int(1000 * record.get("seconds", 0))
        if record.get("ttft") is not None and record.get("completion_tokens"):  # timed: first token, then the rest
            stats["timed"] += 1
            stats["first_token_ms"] += int(1000 * float(record["ttft"]))
            stats["generating_ms"] += max(0, int(1000 * (float(record.get("seconds", 0)) - float(record["ttft"]))))
            stats["generated"] += record["completion_tokens"]
    return {k: stats[k] for k in ("calls", "echoes", "repeats", "same_reply", "no_function", "cut_off", "abandoned",
                                  "retries", "requests", "errors", "tokens_in", "tokens_out", "timed",
                                  "first_token_ms", "generating_ms", "generated")} \
        | {"model_seconds": round(stats["model_ms"] / 1000, 1)}


def report(out: Path) -> dict[str, Any]:
    meta = json.loads((out / "meta.json").read_text(encoding="utf-8"))
    tasks = json.loads((out / "tasks.json").read_text(encoding="utf-8"))
    rows = json.loads((out / "runs.json").read_text(encoding="utf-8")) if (out / "runs.json").exists() else []
    logs = read_log(out / "calls.jsonl")
    by_name = {t["name"]: t for t in tasks}
    originals = {t["name"]: original_function(t) for t in tasks}
    for row in rows:
        name, original, source = originals[row["task"]]
        row["calls"] = call_stats(logs.get(f"{row['system']}|{row['task']}", []), name, original, source)
        row["fix"] = row["status"] in FIX_STATUSES
    from costs import fix_source, speed

    systems: dict[str, Any] = {}
    for system in dict.fromkeys(r["system"] for r in rows):
        mine = [r for r in rows if r["system"] == system]
        total = Counter()
        for r in mine:
            total.update({k: v for k, v in r["calls"].items() if k != "model_seconds"})
        statuses = Counter(r["status"] for r in mine)
        sources = Counter(fix_source(r) for r in mine if fix_source(r))
        correct = statuses["correct"]
        systems[system] = {
            **speed(total), "fixes_from": dict(sources),
            "tokens_per_correct": round((total["tokens_in"] + total["tokens_out"]) / correct) if correct else None,
            "tasks": len(mine), "fixes": sum(r["fix"] for r in mine), "correct": statuses["correct"],
            "wrong": statuses["wrong"], "unjudged": statuses["unjudged"], **dict(total),
            "echo_or_repeat_percent": round(100 * (total["echoes"] + total["repeats"]) / total["calls"], 1)
            if total["calls"] else None,
            "model_seconds": round(sum(r["calls"]["model_seconds"] for r in mine), 1),
            "wall_seconds": round(sum(r["wall"] for r in mine), 1), "statuses": dict(statuses),
        }
    import formats

    def outcome(record: dict[str, Any], row: dict[str, Any]) -> str:
        name, original, source = originals[row["task"]]
        got = reply_function(record.get("reply", ""), name, source)
        return "none" if got is None else "echo" if got == original else "changed"

    by_format = formats.breakdown(logs, rows, outcome)
    chain_over = []
    for task in tasks:
        calls = {r["system"]: r["calls"]["calls"] for r in rows if r["task"] == task["name"]}
        if "regrow-chain" in calls and "regrow-llm" in calls and calls["regrow-chain"] > calls["regrow-llm"]:
            chain_over.append(task["name"])
    data = {"meta": meta, "tasks": [{k: by_name[t["name"]].get(k) for k in ("name", "suite", "target", "bug")}
                                    for t in tasks],
            "systems": systems, "chain_calls_over_llm": chain_over, "by_format": by_format, "runs": rows,
            "whole": whole_suites(out, meta, rows, logs)}
    (out / "results.json").write_text(json.dumps(data, indent=1, default=str) + "\n", encoding="utf-8")
    (out / "results.md").write_text(markdown(data), encoding="utf-8")
    return data


def whole_suites(out: Path, meta: dict[str, Any], rows: list[dict[str, Any]],
                 logs: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Chain mode on the whole suites (``whole.py``), when the engine pass is known."""
    import whole

    if not meta.get("engine"):
        return {}
    runs = json.loads((out / "whole.json").read_text(encoding="utf-8")) if (out / "whole.json").exists() else []
    tokens: dict[str, int] = {}
    for label, records in logs.items():
        system, _, task = label.partition("|")
        if system in ("regrow-chain", whole.SYSTEM):
            tokens[task] = sum(r.get("prompt_tokens", 0) + r.get("completion_tokens", 0) for r in records)
    residue = [r for r in rows if r["system"] == "regrow-chain"]
    return whole.summary(meta["engine"], residue, runs, tokens)


def markdown(data: dict[str, Any]) -> str:
    from costs import shown

    meta, systems = data["meta"], data["systems"]
    lines = [
        "# bench-llm: regrow's model path beside self-heal's, on one local model",
        "",
        f"regrow {meta['regrow_commit'][:12]} · self-heal-llm {meta['self_heal']} · model {meta['model_name']} "
        f"(GGUF sha256 {meta['model_sha256'][:12]}…, repack: measurement only) · gpt4all {meta['gpt4all']} · "
        f"greedy, reply cap {meta['max_tokens']} tokens · {meta['calls']} model calls per task · "
        f"task timeout {meta['timeout']:g}s · {meta['started']}",
        "",
        "| system | tasks | fixes | correct | wrong | unjudged | model calls | echoes | repeats "
        "| echoes + repeats | same reply again | no usable function | retries | tokens in | tokens out | model s "
        "| wall s | first token s | tokens/s | tokens per correct fix | fixes from |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
        "| ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for system, s in systems.items():
        share = f"{s['echo_or_repeat_percent']}%" if s["echo_or_repeat_percent"] is not None else "—"
        lines.append(f"| {system} | {s['tasks']} | {s['fixes']} | {s['correct']} | {s['wrong']} | {s['unjudged']} "
                     f"| {s.get('calls', 0)} | {s.get('echoes', 0)} | {s.get('repeats', 0)} | {share} "
                     f"| {s.get('same_reply', 0)} "
                     f"| {s.get('no_function', 0)} | {s.get('retries', 0)} | {s.get('tokens_in', 0)} "
                     f"| {s.get('tokens_out', 0)} | {s['model_seconds']} | {s['wall_seconds']} "
                     f"| {shown(s.get('first_token_seconds'))} | {shown(s.get('tokens_per_second'))} "
                     f"| {shown(s.get('tokens_per_correct'))} "
                     f"| {', '.join(f'{k} {v}' for k, v in sorted(s.get('fixes_from', {}).items())) or '—'} |")
    over = data["chain_calls_over_llm"]
    lines += ["", f"Tasks where chain mode made more model calls than model-only mode: "
                  f"{', '.join(over) if over else 'none'}.", "",
              "| task | suite | " + " | ".join(systems) + " |",
              "| --- | --- | " + " | ".join("---" for _ in systems) + " |"]
    for task in data["tasks"]:
        cells = []
        for system in systems:
            row = next((r for r in data["runs"] if r["system"] == system and r["task"] == task["name"]), None)
            if row is None:
                cells.append("—")
                continue
            c = row["calls"]
            extra = [f"{c['calls']} calls"]
            if c["echoes"]:
                extra.append(f"{c['echoes']} echo")
            if c["repeats"]:
                extra.append(f"{c['repeats']} repeat")
            if c.get("same_reply"):
                extra.append(f"{c['same_reply']} same reply")
            by = f" ({row['operator']})" if row.get("operator") else ""
            cells.append(f"{row['status']}{by}, {', '.join(extra)}")
        lines.append(f"| {task['name']} | {task['suite']} | " + " | ".join(cells) + " |")
    lines += ["", "Statuses: `correct`/`wrong`/`unjudged` are fixes judged against the reference by regrow bench's "
                  "differential judge; for self-heal, its claimed fix is judged the same way by `judge_fix.py` "
                  "(`fails-tests`: its fix does not pass the task's test files run by regrow). `not-fixed`: no fix "
                  "within the call budget; `timeout`: killed at the task timeout.", ""]
    if data.get("by_format"):
        import formats

        lines += formats.markdown(data["by_format"])
    if data.get("whole"):
        import whole

        lines += whole.markdown(data["whole"])
    engine = meta.get("engine", {})
    if engine:
        lines += ["Engine pass (who the candidates were):", ""]
        for suite, e in engine.items():
            lines.append(f"- {suite}: {e['candidates']} candidates ({e['origin']}); statuses "
                         f"{e.get('statuses', {})}; {e.get('unfixed', 0)} not fixed by the engine")
        lines.append("")
    return "\n".join(lines)


def run_abstained(args: argparse.Namespace, out: Path, engine: dict[str, Any]) -> None:
    import whole

    tasks = whole.abstained_tasks(engine, candidates, args.realcode_sample)
    print(f"bench-llm: chain mode on the {len(tasks)} tasks the engine abstained on: "
          f"{', '.join(t['name'] for t in tasks) or 'none'}", flush=True)
    whole.run_whole(tasks, args, out, sys.modules[__name__])


# -- main -------------------------------------------------------------------------------------------------------------

def versions() -> dict[str, str]:
    found = {}
    for package in ("regrow", "gpt4all", "openai", "pytest"):
        try:
            found[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            found[package] = "missing"
    return found


def self_heal_version(python: str) -> str:
    done = subprocess.run([python, "-c", "import importlib.metadata as m; print(m.version('self-heal-llm'))"],
                          capture_output=True, text=True, check=False)
    return done.stdout.strip() or "missing"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("step", choices=("all", "engine", "select", "report", "rejudge", "whole"))
    parser.add_argument("--out", default=str(REPO / "bench-results/llm"))
    parser.add_argument("--model-file", default=str(REPO / ".cache/bench-llm/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"))
    parser.add_argument("--model-name", default="qwen2.5-coder-1.5b-instruct-q4_k_m")
    parser.add_argument("--regrow-commit", default=os.environ.get("REGROW_COMMIT", "unknown"))
    parser.add_argument("--tasks", type=int, default=10, help="engine-unfixable tasks to run (10)")
    parser.add_argument("--realcode-sample", type=int, default=48, help="real-code tasks the engine pass runs on (48)")
    parser.add_argument("--calls", type=int, default=3, help="model calls per task for every system (3)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per task and system (300)")
    parser.add_argument("--call-seconds", type=float, default=10.0,
                        help="self-heal driver: limit on one call of the function (10; a test run gets 6x)")
    parser.add_argument("--max-tokens", type=int, default=768, help="the server's cap on a reply (768)")
    parser.add_argument("--port", type=int, default=8766)
    parser.add_argument("--self-heal-python", default=str(REPO / ".venv-self-heal/bin/python"),
                        help="the Python of self-heal's own environment (.venv-self-heal/bin/python)")
    parser.add_argument("--systems", default=",".join(SYSTEMS), help=f"comma-separated, of {', '.join(SYSTEMS)}")
    parser.add_argument("--resume", action="store_true",
                        help="keep the runs in OUT/runs.json that did not end in error and run only the rest")
    args = parser.parse_args(argv)
    args.systems = [s for s in args.systems.split(",") if s]
    args.self_heal_python = os.path.abspath(args.self_heal_python)  # not resolved: a venv's python is a link
    if unknown := set(args.systems) - set(SYSTEMS):
        parser.error(f"unknown systems: {', '.join(sorted(unknown))}")
    out = Path(args.out).absolute()  # the task scripts run in the tasks' roots
    out.mkdir(parents=True, exist_ok=True)
    if args.step == "rejudge":
        print("bench-llm: judged again: " + (", ".join(rejudge(out)) or "none"), flush=True)
    sys.path.insert(0, str(HERE))
    if args.step == "whole":
        run_abstained(args, out, json.loads((out / "meta.json").read_text(encoding="utf-8"))["engine"])
    if args.step in ("report", "rejudge", "whole"):
        report(out)
        print((out / "results.md").read_text(encoding="utf-8"))
        return 0
    if args.calls != 3:
        print("bench-llm: note: regrow bench's model proposer makes 3 calls per session (its default); "
              "--calls changes self-heal's budget only", file=sys.stderr)
    started = time.strftime("%Y-%m-%d %H:%M:%S %z")
    clock = time.monotonic()
    engine = engine_pass(out, args.realcode_sample, args.regrow_commit)
    if args.step == "engine":
        return 0
    tasks = select(engine, args.tasks, out, args.realcode_sample)
    print(f"bench-llm: {len(tasks)} engine-unfixable tasks: {', '.join(t['name'] for t in tasks)}", flush=True)
    if args.step == "select":
        return 0
    import fetch_model

    meta = {"regrow_commit": args.regrow_commit, "versions": versions(),
            "self_heal": self_heal_version(args.self_heal_python), "gpt4all": versions()["gpt4all"],
            "model_name": args.model_name, "model_file": Path(args.model_file).name, "model_sha256": fetch_model.SHA256,
            "model_bytes": fetch_model.SIZE, "max_tokens": args.max_tokens, "calls": args.calls,
            "timeout": args.timeout, "call_seconds": args.call_seconds, "started": started,
            "python": platform.python_version(), "cores": os.cpu_count(), "systems": args.systems,
            "task_limit": args.tasks, "realcode_sample": args.realcode_sample, "engine": engine}
    if args.resume and (out / "meta.json").exists():
        earlier = json.loads((out / "meta.json").read_text(encoding="utf-8"))
        meta["started"] = earlier.get("started", started)
        meta["resumed"] = [*earlier.get("resumed", []), started]
    (out / "meta.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    load_before = os.getloadavg()
    run_systems(tasks, args, out)
    if "regrow-chain" in args.systems:
        run_abstained(args, out, engine)
    meta.update(wall_seconds=round(time.monotonic() - clock, 1), load_before=load_before, load_after=os.getloadavg())
    (out / "meta.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    report(out)
    print((out / "results.md").read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
