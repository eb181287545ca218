"""Healthy-path cost of ``regrow.watch``: calls of a watched package's function with the watch on vs off.

Run by benchmarks/live.py under each Python it finds (3.12+: ``sys.monitoring``; 3.10/3.11: the
wrapping fallback), with ``PYTHONPATH=src`` and no third-party package. Each round times N calls with
the watch off and N with it on (the order alternating between rounds, so drift in CPU speed hits both
alike); the figures are the median over rounds of the per-round ratio on/off, and the ratio of the
fastest round of each. Prints one JSON object.

    PYTHONPATH=src python benchmarks/live_hook.py [--calls N] [--rounds R]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import regrow

MODULE = '''
def add(a, b):
    return a + b


def parse_qty(text):
    text = text.strip().lower()
    if text.endswith("pcs"):
        text = text[:-3]
    if not text:
        return 0
    return int(text.replace(",", ""))
'''


def _time(fn, arg, n: int) -> float:
    start = time.perf_counter_ns()
    for _ in range(n):
        fn(arg, 2) if arg is not None else fn("1,234 pcs")
    return (time.perf_counter_ns() - start) / n


def _measure(module, name: str, arg, calls: int, rounds: int) -> dict[str, float]:
    off: list[float] = []
    on: list[float] = []
    ratios: list[float] = []
    for r in range(rounds):
        order = (False, True) if r % 2 else (True, False)
        got = {}
        for watched in order:
            if watched:
                regrow.watch("livehookpkg")
            fn = getattr(module, name)  # the wrapping fallback rebinds the module's names at watch()
            got[watched] = _time(fn, arg, calls)
            if watched:
                regrow.unwatch()
        off.append(got[False])
        on.append(got[True])
        ratios.append(got[True] / got[False])
    # The median of the per-round ratios, and the ratio of the fastest rounds (the least disturbed by
    # other work on the machine): on a busy machine the two bracket the cost.
    return {"off_ns": round(statistics.median(off), 1), "on_ns": round(statistics.median(on), 1),
            "ratio": round(statistics.median(ratios), 4), "ratio_of_fastest": round(min(on) / min(off), 4)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=101)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        package = Path(folder, "livehookpkg")
        package.mkdir()
        (package / "__init__.py").write_text("")
        (package / "logic.py").write_text(MODULE)
        sys.path.insert(0, folder)
        from livehookpkg import logic

        result = {
            "python": platform.python_version(),
            "hook": "sys.monitoring" if sys.version_info >= (3, 12) else "wrapping",
            "add": _measure(logic, "add", 1, args.calls, args.rounds),
            "parse_qty": _measure(logic, "parse_qty", None, args.calls // 4, args.rounds),
        }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
