"""Overhead of @regrow.heal on a healthy call: decorated vs plain, measured side by side.

Run: .venv/bin/python benchmarks/overhead.py  (or: make bench)

Each round times N calls of each function in turn (interleaved, so drift in CPU speed hits both
alike); the per-call figure is the median over rounds. Target: <= 50 ns of overhead per call.
With ``verify=`` (and ``record=``) the arguments are also copied before each call, so that a call
that changes them before it fails is replayed on what the caller passed: the last row shows that
cost for a list of ten small dicts (a deep copy), against the same ``plain`` baseline.
"""

from __future__ import annotations

import argparse
import statistics
import time

import regrow


def plain(a, b):
    return a + b


@regrow.heal
def healed(a, b):
    return a + b


@regrow.heal(verify=lambda r: r is not None)
def verified(a, b):
    return a + b


@regrow.heal(verify=lambda r: r is not None)
def verified_rows(rows, b):
    return len(rows) + b


ROWS = [{"id": i, "name": f"row {i}"} for i in range(10)]


def _time(fn, n: int) -> float:
    start = time.perf_counter_ns()
    if fn is verified_rows:  # verify= copies the arguments before each call: a list of 10 dicts here
        for _ in range(n):
            fn(ROWS, 2)
    else:
        for i in range(n):
            fn(i, 2)
    return (time.perf_counter_ns() - start) / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=25)
    args = parser.parse_args()
    samples: dict[str, list[float]] = {"plain": [], "healed": [], "healed+verify": [], "verify, 10 rows": []}
    for _ in range(args.rounds):
        samples["plain"].append(_time(plain, args.calls))
        samples["healed"].append(_time(healed, args.calls))
        samples["healed+verify"].append(_time(verified, args.calls))
        samples["verify, 10 rows"].append(_time(verified_rows, args.calls // 10))
    base = statistics.median(samples["plain"])
    print(f"{'function':<16}{'ns/call':>10}{'overhead ns':>14}{'ratio':>8}")
    for name, values in samples.items():
        median = statistics.median(values)
        print(f"{name:<16}{median:>10.1f}{median - base:>14.1f}{median / base:>8.2f}")
    overhead = statistics.median(samples["healed"]) - base
    verdict = "meets" if overhead <= 50 else "misses"
    print(f"\n@regrow.heal adds {overhead:.1f} ns per healthy call ({verdict} the 50 ns target)")


if __name__ == "__main__":
    main()
