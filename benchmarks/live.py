"""regrow in a live service: a real app on loopback under load, with a bug many distinct inputs hit.

    .venv/bin/python benchmarks/live.py [--servers starlette,flask] [--requests 1500] [--rate 100]

For each server (Starlette under uvicorn, Flask under gunicorn; the app is benchmarks/live_app/) the
same app is served twice at the same time on loopback ports, each from a fresh copy: **without
regrow** (the baseline) and behind regrow's middleware (``tests=`` oracle, ``wait=0.05``). Both get
the same paced, bounded stream of GET requests, interleaved (benchmarks/live_load.py): a healthy
warm-up, then a mix in which every 5th request is a distinct quantity typed with "pcs" that the
injected bug makes raise.

The regrow run is cut into phases: *before* the first bad request, *during* the repair (until the
fix was installed, read from the server's event log: a JSON line per repair event), and *after*;
each phase is set against the baseline's requests of the same indices, so the ratios compare the
same requests in the same run. It counts the repair sessions started (goal: 1 for all the distinct bad inputs).

Last, the healthy-path cost of ``regrow.watch`` (benchmarks/live_hook.py) under Python 3.12 and 3.13
where installed (``sys.monitoring``; goal <= 2 %) and under this Python. Prints a table; writes
bench-results/live.json.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from live_load import Request, Sample, run, schedule, summary

HERE = Path(__file__).resolve().parent
SRC = str(HERE.parent / "src")
PHASES = ("before", "during", "after")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _command(server: str, port: int) -> list[str]:
    if server == "starlette":
        return [sys.executable, "-m", "uvicorn", "--host", "127.0.0.1", "--port", str(port),
                "--log-level", "warning", "asgi:app"]
    return [sys.executable, "-m", "gunicorn", "-w", "1", "--threads", "4", "--timeout", "120",
            "-b", f"127.0.0.1:{port}", "wsgi:app"]


@contextmanager
def serve(server: str, regrow: bool, wait: float) -> Iterator[tuple[str, Path]]:
    """Serve a fresh copy of the app (the bug in its source) on a loopback port: its URL and its folder."""
    with tempfile.TemporaryDirectory(prefix="regrow-live-") as folder:
        app = Path(folder, "app")
        shutil.copytree(HERE / "live_app", app, ignore=shutil.ignore_patterns("__pycache__"))
        events = Path(folder, "events.jsonl")
        events.touch()
        port = _free_port()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, str(app)]), "LIVE_EVENTS": str(events),
               "LIVE_REGROW": "1" if regrow else "0", "LIVE_WAIT": str(wait)}
        with open(Path(folder, "server.log"), "w") as log:
            process = subprocess.Popen(_command(server, port), cwd=app, env=env, stdout=log,
                                       stderr=subprocess.STDOUT)
            url = f"http://127.0.0.1:{port}"
            try:
                _ready(url, process, Path(folder, "server.log"))
                yield url, events
            finally:
                process.terminate()
                try:
                    process.wait(30)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


def _ready(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            httpx.get(url + "/", timeout=5)
            return
        except httpx.TransportError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the server did not start:\n{log.read_text()}") from None
            time.sleep(0.2)


def _events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _phase_of(sample: Sample, started: float | None, installed: float | None) -> str:
    if started is None or sample.sent < started:
        return "before"
    if installed is None or sample.sent < installed:
        return "during"
    return "after"


def measure(server: str, requests: list[Request], args: argparse.Namespace) -> dict[str, Any]:
    """The baseline run and the regrow run of one server, phase by phase."""
    with serve(server, False, args.wait) as (plain_url, _), serve(server, True, args.wait) as (url, log):
        baseline, watched = run([plain_url, url], requests, args.rate, args.threads)
        time.sleep(0.5)  # an event written as the last answer went out
        events = _events(log)
    # The repair begins with the first failure (capturing it and building the session precede the
    # session's first event): "during" runs from the first bad request sent to the fix installed.
    first_bad = min((s.sent for s, r in zip(watched, requests, strict=True) if r.bad), default=None)
    session = min((e["t"] for e in events if e["type"] == "session_start"), default=None)
    installed = min((e["t"] for e in events if e["type"] == "installed"), default=None)
    started = first_bad if session is not None else None
    phases: dict[str, Any] = {}
    for phase in PHASES:
        indices = [i for i, s in enumerate(watched) if _phase_of(s, started, installed) == phase]
        regrow_figures = summary([watched[i] for i in indices])
        base_figures = summary([baseline[i] for i in indices])
        phases[phase] = {"regrow": regrow_figures, "baseline": base_figures, **_ratios(regrow_figures, base_figures)}
    headers: dict[str, int] = {}
    for sample in watched:
        if sample.header:
            headers[sample.header] = headers.get(sample.header, 0) + 1
    return {
        "baseline_whole_run": summary(baseline),
        "regrow_whole_run": summary(watched),
        "phases": phases,
        "sessions_started": sum(e["type"] == "session_start" for e in events),
        "fixes_installed": sum(e["type"] == "installed" for e in events),
        "repair_seconds": round(installed - started, 3) if started and installed else None,
        "session_seconds": round(installed - session, 3) if session and installed else None,
        "bad_requests": sum(r.bad for r in requests),
        "x_regrow": headers,
    }


def _ratios(regrow: dict[str, Any], base: dict[str, Any]) -> dict[str, float | None]:
    if not regrow.get("requests") or not base.get("p50_ms"):
        return {"p50_ratio": None, "p99_ratio": None}
    return {"p50_ratio": round(regrow["p50_ms"] / base["p50_ms"], 3),
            "p99_ratio": round(regrow["p99_ms"] / base["p99_ms"], 3)}


def hook_costs(rounds: int) -> dict[str, Any]:
    """benchmarks/live_hook.py under 3.12 and 3.13 (where installed) and under this Python."""
    found: dict[str, str] = {}
    for minor in ("3.12", "3.13"):
        candidates = sorted(glob.glob(f"/root/.pyenv/versions/{minor}.*/bin/python")) or \
            [p for p in (shutil.which(f"python{minor}"),) if p]
        found[minor] = candidates[-1] if candidates else ""
    found[f"{sys.version_info[0]}.{sys.version_info[1]} (this)"] = sys.executable
    results: dict[str, Any] = {}
    for label, python in found.items():
        if not python:
            results[label] = f"{label} not found"
            continue
        env = {**os.environ, "PYTHONPATH": SRC}
        done = subprocess.run([python, str(HERE / "live_hook.py"), "--rounds", str(rounds)], env=env,
                              capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            results[label] = f"failed: {done.stderr.strip().splitlines()[-1:]}"
            continue
        results[label] = json.loads(done.stdout)
    return results


def _row(*cells: object) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def report(results: dict[str, Any]) -> None:
    for server, figures in results["servers"].items():
        print(f"\n{server}: {figures['bad_requests']} distinct bad inputs of one bug; "
              f"repair sessions started: {figures['sessions_started']} (goal 1); "
              f"fix installed {figures['repair_seconds']} s after the first bad request "
              f"(session {figures['session_seconds']} s); X-Regrow: {figures['x_regrow']}")
        print(_row("phase", "requests", "p50 ms (baseline)", "p99 ms (baseline)", "p50 ratio", "p99 ratio",
                   "errors (baseline)", "wrong answers (baseline)"))
        print(_row(*["---"] * 8))
        for phase in PHASES:
            p = results["servers"][server]["phases"][phase]
            r, b = p["regrow"], p["baseline"]
            if not r.get("requests"):
                print(_row(phase, 0, "", "", "", "", "", ""))
                continue
            print(_row(phase, r["requests"], f"{r['p50_ms']} ({b['p50_ms']})", f"{r['p99_ms']} ({b['p99_ms']})",
                       p["p50_ratio"], p["p99_ratio"], f"{r['error_rate']:.1%} ({b['error_rate']:.1%})",
                       f"{r['wrong_rate']:.1%} ({b['wrong_rate']:.1%})"))
    print("\nhealthy-path cost of regrow.watch (median per-round ratio on/off):")
    for label, figures in results["hook"].items():
        if isinstance(figures, str):
            print(f"  {label}: {figures}")
            continue
        cells = [f"{name}() x{f['ratio']} (fastest x{f['ratio_of_fastest']}; {f['off_ns']} -> {f['on_ns']} ns)"
                 for name, f in ((n, figures[n]) for n in ("add", "parse_qty"))]
        print(f"  Python {figures['python']} ({figures['hook']}): " + ", ".join(cells))
    print(f"\nload average {results['load_before']} before, {results['load_after']} after; "
          f"{results['seconds']} s in all")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", default="starlette,flask", help="starlette (uvicorn), flask (gunicorn)")
    parser.add_argument("--requests", type=int, default=1500, help="requests per run (bounded)")
    parser.add_argument("--warmup", type=int, default=300, help="healthy requests before the first bad one")
    parser.add_argument("--bad-every", type=int, default=5, help="every Nth request after the warm-up is bad")
    parser.add_argument("--rate", type=float, default=100.0, help="requests per second to each app")
    parser.add_argument("--threads", type=int, default=16, help="client threads")
    parser.add_argument("--wait", type=float, default=0.05, help="the middleware's wait= (seconds)")
    parser.add_argument("--hook-rounds", type=int, default=101)
    parser.add_argument("--out", default="bench-results/live.json")
    args = parser.parse_args()
    began = time.monotonic()
    load_before = [round(x, 2) for x in os.getloadavg()]
    requests = schedule(args.requests, args.warmup, args.bad_every)
    servers = {name: measure(name, requests, args) for name in args.servers.split(",") if name}
    results = {"settings": {k: v for k, v in vars(args).items() if k != "out"}, "load_before": load_before,
               "servers": servers, "hook": hook_costs(args.hook_rounds)}
    results["load_after"] = [round(x, 2) for x in os.getloadavg()]
    results["seconds"] = round(time.monotonic() - began, 1)
    report(results)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
