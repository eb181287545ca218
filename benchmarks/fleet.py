"""The fleet, on both store backends: distribution latency, claim and cache-lookup latency, worker throughput.

Run: .venv/bin/python benchmarks/fleet.py  (or: make bench)

- *distribution*: 8 processes run a healed function (tests=, store=) that has not failed in them; this
  process lands a fix for it (a repair with install=False publishes it). Measured: from the landing
  (its row's time) to the moment the last of the 8 runs the fix (each process proves it with its own
  tests before installing it). Goal: <= 1 s.
- *claim* and *lookup*: the median of 200 single-flight claims (fresh fingerprints) and of 200 cache
  lookups of a stored fix, in this process.
- *jobs/s*: 1, 2 and 4 `regrow worker`-style processes, started and imported before the clock starts,
  drain 200 captured jobs of 200 distinct failures (two thirds fixable, one third unfixable: every
  job is a search of its own, none served by another's fix); jobs per second and the ratio against
  1 worker, in the same run, and each job done exactly once. On this 2-core machine the ceiling is
  about 2x: 4 workers share the 2 cores of 2.

PostgreSQL runs on a server started for the run (tests/pg_server.py; PostgreSQL 15's binaries), as the
tests start it. Without the binaries only SQLite is measured, and the report says so.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from regrow import Store, repair  # noqa: E402
from regrow._service._worker import capture_call  # noqa: E402

SHOP = '''
def total(values):
    result = 0
    for i in range(1, len(values) + 1):
        result += values[i]
    return result


def test_total(fn):
    assert fn([2, 3, 5]) == 10


def half(n):
    return n // 0


def test_half(fn):
    assert fn(4) == "never"
'''

WATCHER = '''
import sys, time
from pathlib import Path

import regrow
import bench_shop

folder, store = Path(sys.argv[1]), sys.argv[2]
healed = regrow.heal(tests=[bench_shop.test_total], proposers=[], store=store)(bench_shop.total)
(folder / f"ready-{sys.argv[3]}").touch()
deadline = time.monotonic() + 300
while time.monotonic() < deadline:
    try:
        if bench_shop.total([2, 3, 5]) == 10:
            print(time.time(), flush=True)
            break
    except IndexError:
        pass
    time.sleep(0.002)
'''

WORKER = '''
import sys, time
from pathlib import Path
from regrow._service._worker import work
import bench_shop  # imported before the clock starts, as a running worker has it

folder = Path(sys.argv[3])
(folder / f"ready-{sys.argv[2]}").touch()
while not (folder / "go").exists():
    time.sleep(0.005)
print(len(work(sys.argv[1], name=sys.argv[2], until_idle=True, lease=120)), flush=True)
'''
WATCHERS = 8
JOBS = 200
FAILURES = """
def total_{n}(values):
    result = {n}
    for i in range(1, len(values) + 1):
        result += values[i]
    return result


def test_total_{n}(fn):
    assert fn([2, 3, 5]) == {n} + 10


def half_{n}(n):
    return n // 0 + {n}


def test_half_{n}(fn):
    assert fn(4) == "never"
"""


def _env(folder: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(folder)])}


def _shop(folder: Path) -> Any:
    failures = "".join(FAILURES.format(n=n) for n in range(JOBS))
    (folder / "bench_shop.py").write_text(textwrap.dedent(SHOP) + failures)
    sys.path.insert(0, str(folder))
    sys.modules.pop("bench_shop", None)
    import bench_shop

    return bench_shop


def distribution(url: str, folder: Path) -> float:
    """Seconds from a fix landing to the last of the watchers running it."""
    shop = _shop(folder)
    (folder / "watcher.py").write_text(textwrap.dedent(WATCHER))
    watchers = [subprocess.Popen([sys.executable, str(folder / "watcher.py"), str(folder), url, str(n)],
                                 env=_env(folder), stdout=subprocess.PIPE, text=True) for n in range(WATCHERS)]
    while len(list(folder.glob("ready-*"))) < WATCHERS:
        if any(w.poll() is not None for w in watchers):
            raise RuntimeError("a watcher died before it was ready")
        time.sleep(0.05)
    store = Store(url)
    try:
        landed = repair(shop.total, [[2, 3, 5]], tests=[shop.test_total], store=store, install=False)
        assert landed.ok, landed.reason
        seen = [float(w.communicate(timeout=600)[0].strip() or "inf") for w in watchers]
        with store._transaction(write=False) as tx:
            at = float(tx.rows("SELECT MAX(created) FROM landings")[0][0])
    finally:
        store.close()
    return max(seen) - at


def latencies(url: str) -> tuple[float, float]:
    """The median seconds of a claim and of a cache lookup."""
    store = Store(url)
    try:
        claims = []
        for n in range(200):
            start = time.perf_counter()
            store.claim(f"bench-{n}", "bench", 30.0)
            claims.append(time.perf_counter() - start)
        with store._transaction() as tx:
            tx.change("INSERT INTO fixes (key, qualname, fingerprint, source, origin, operator, created) "
                      "VALUES (?, ?, ?, ?, ?, ?, ?)", ("bench-key", "f", "fp", "def f(): pass", "engine", "op", 0.0))
        lookups = []
        for _ in range(200):
            start = time.perf_counter()
            store.lookup("bench-key")
            lookups.append(time.perf_counter() - start)
    finally:
        store.close()
    return statistics.median(claims), statistics.median(lookups)


def throughput(make_url: Any, folder: Path, workers: int) -> float:
    """Jobs per second for ``workers`` worker processes draining JOBS captured jobs."""
    url = make_url()
    shop = _shop(folder)
    store = Store(url)
    try:
        for n in range(JOBS):
            if n % 3 == 2:
                capture = capture_call(getattr(shop, f"half_{n}"), [n], tests=[getattr(shop, f"test_half_{n}")])
            else:
                capture = capture_call(getattr(shop, f"total_{n}"), [[2, 3, 5]],
                                       tests=[getattr(shop, f"test_total_{n}")])
            assert capture is not None
            store.submit(capture)
    finally:
        store.close()
    (folder / "worker.py").write_text(textwrap.dedent(WORKER))
    running = [subprocess.Popen([sys.executable, str(folder / "worker.py"), url, f"w{n}", str(folder)],
                                env=_env(folder), stdout=subprocess.PIPE, text=True) for n in range(workers)]
    while len(list(folder.glob("ready-*"))) < workers:  # started and imported: the clock counts only the work
        if any(w.poll() is not None for w in running):
            raise RuntimeError("a worker died before it was ready")
        time.sleep(0.02)
    start = time.perf_counter()
    (folder / "go").touch()
    done = sum(int(w.communicate(timeout=1800)[0].strip() or 0) for w in running)
    elapsed = time.perf_counter() - start
    store = Store(url)
    try:
        finished = store.jobs("done")
    finally:
        store.close()
    if done != JOBS or len(finished) != JOBS:
        raise RuntimeError(f"{workers} workers completed {done} of {JOBS} jobs ({len(finished)} marked done)")
    return JOBS / elapsed


def measure(name: str, make_url: Any) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="regrow-fleet-bench-") as scratch:
        folder = Path(scratch)
        found: dict[str, Any] = {"backend": name}
        (folder / "d").mkdir()
        found["distribution_s"] = distribution(make_url(), folder / "d")
        found["claim_ms"], found["lookup_ms"] = (1000 * v for v in latencies(make_url()))
        rates = {}
        for workers in (1, 2, 4):
            (folder / f"w{workers}").mkdir()
            rates[workers] = throughput(make_url, folder / f"w{workers}", workers)
        found["jobs_per_s"] = rates
        found["ratio_vs_1"] = {w: rates[w] / rates[1] for w in rates}
    return found


def main() -> int:
    import argparse

    from pg_server import Server, _bindir

    global JOBS
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--jobs", type=int, default=JOBS, help=f"captured jobs the workers drain ({JOBS})")
    parser.add_argument("--backend", choices=("sqlite", "postgresql", "both"), default="both")
    args = parser.parse_args()
    JOBS = args.jobs
    results = []
    if args.backend != "postgresql":
        with tempfile.TemporaryDirectory(prefix="regrow-fleet-sqlite-") as scratch:
            serial = iter(range(1000))
            results.append(measure("sqlite", lambda: str(Path(scratch) / f"store-{next(serial)}.db")))
    bindir = _bindir()
    if args.backend == "sqlite":
        pass
    elif bindir is None:
        print("fleet: PostgreSQL server binaries not found: PostgreSQL not measured")
    else:
        server = Server(bindir)
        try:
            results.append(measure("postgresql", server.database))
        finally:
            server.stop()
    for found in results:
        ok = "ok" if found["distribution_s"] <= 1.0 else "OVER the 1 s goal"
        rates = ", ".join(f"{w}: {r:.2f}/s (x{found['ratio_vs_1'][w]:.2f})" for w, r in found["jobs_per_s"].items())
        print(f"fleet [{found['backend']}]: fix landed -> last of {WATCHERS} processes running it "
              f"{found['distribution_s']:.3f} s ({ok}); claim {found['claim_ms']:.2f} ms, "
              f"lookup {found['lookup_ms']:.2f} ms (medians of 200); jobs/s for 1, 2, 4 workers: {rates}")
    print(json.dumps(results))
    return 0 if all(found["distribution_s"] <= 1.0 for found in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
