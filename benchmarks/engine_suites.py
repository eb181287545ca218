"""Candidates per second on a real library's test suite, with the engine's screening on and off.

    python benchmarks/fetch_sdists.py build          # once: the real-code task trees (docs/realcode.md)
    python benchmarks/engine_suites.py [TASK ...]    # default: wcwidth-bisearch-upper

Each task is searched exhaustively by the engine twice, in one run, with the same candidate budget:
with screening (each candidate run first on the tests that failed, then only on the tests that ran
the lines it changes on the original, each test under a limit of its own: docs/engine.md, "Throughput
on real suites") and without it (every test for every candidate, the candidate's limit only). It
prints candidates/s for both and their ratio; the figure is the ratio, measured in the same run, not
the absolute rate (the machine's load moves both alike).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from regrow._checks._oracles import PytestTests
from regrow._proposers._engine import Engine
from regrow._checks._spectrum import Spectrum
from regrow._evidence._failure import check_failure
from regrow._proposers._proposer import Request
from regrow._target._target import Target

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = ROOT / ".cache" / "realcode" / "manifest.toml"
DEFAULT = ("wcwidth-bisearch-upper",)
BUDGET = 400  # candidates per search: enough for a steady rate, little enough for a loaded machine


def _tasks() -> dict[str, dict[str, Any]]:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    data = tomllib.loads(MANIFEST.read_text(encoding="utf-8"))
    return {task["name"]: task for task in data["task"]}


def search(task: dict[str, Any], screening: bool) -> tuple[int, float]:
    """Candidates judged and seconds spent searching ``task`` (in its own tree), screening on or off."""
    root = (MANIFEST.parent / task["root"]).resolve()
    os.chdir(root)
    sys.path.insert(0, str(root))
    target = Target.from_ref(task["target"])
    tests = PytestTests(list(task["tests"]), rootdir=root)
    engine = Engine(reuse=screening, neighbourhood=BUDGET)
    limits = Spectrum.test_limits
    if not screening:
        Spectrum.test_limits = lambda self, *args, **kwargs: {}  # type: ignore[method-assign]
    try:
        request = Request(target, check_failure("test", target.func, "benchmark"), [], [tests], 1,
                          time.monotonic() + 300, max_candidates=BUDGET)
        list(engine.propose(request))
    finally:
        Spectrum.test_limits = limits  # type: ignore[method-assign]
        sys.path.remove(str(root))
    return engine.last_stats.evaluated, engine.last_stats.search_seconds


def main(names: list[str]) -> int:
    if not MANIFEST.exists():
        print(f"no {MANIFEST}: run `python benchmarks/fetch_sdists.py build` first")
        return 1
    tasks = _tasks()
    print(f"regrow engine on real suites (Python {sys.version.split()[0]}, load {os.getloadavg()[0]:.1f}, "
          f"{BUDGET} candidates per search)")
    for name in names or DEFAULT:
        task = tasks[name]
        rates = {}
        for screening in (False, True):
            count, seconds = search(task, screening)
            rates[screening] = count / seconds if seconds else 0.0
            print(f"  {name}: screening {'on ' if screening else 'off'}: {count} candidates in {seconds:.2f}s "
                  f"= {rates[screening]:.1f}/s")
        print(f"  {name}: screening on / off = {rates[True] / max(rates[False], 1e-9):.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
