"""Candidates per second: the built-in engine on a small function with ten pytest tests.

    python benchmarks/engine.py

Two runs in a scratch folder: one where the bug is a missing feature no single edit fixes (so the
engine walks its whole search space: the throughput figure), and one single-token bug (time to a
ranked fix). Then the exhaustive walk again with 1, 2 and N (every core) warm workers judging at
once: candidates/s for each, the ratio against one worker measured in the same run, and whether
the same patches came out (they must, whatever N).
"""

from __future__ import annotations

import os
import resource
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from regrow._checks._oracles import PytestTests
from regrow._proposers._engine import Engine
from regrow._proposers._engine._judges import cores
from regrow._evidence._failure import check_failure
from regrow._proposers._proposer import Request
from regrow._target._target import Target

PROGRAM = '''
def score(words, bonus):
    """Sum of word lengths, counting words of five letters or more double, plus a bonus per vowel word."""
    total = 0
    for word in words:
        size = len(word)
        if size >= 5:
            total += 2 * size
        else:
            total += size
        if word[:1] in "aeiou":
            total += bonus
    return total
'''

TESTS = '''
from {module} import score

def test_empty(): assert score([], 3) == 0
def test_short(): assert score(["cat"], 0) == 3
def test_long(): assert score(["house"], 0) == 10
def test_mixed(): assert score(["cat", "house"], 0) == 13
def test_bonus(): assert score(["apple"], 2) == 12
def test_bonus_short(): assert score(["egg"], 1) == 4
def test_no_bonus(): assert score(["dog"], 5) == 3
def test_many(): assert score(["a", "bb", "ccc"], 1) == 7
def test_four(): assert score(["tree"], 0) == 4
def test_caps(): assert score(["Apple"], 2) == {caps}
'''


def run(folder: Path, module: str, program: str, caps: int, jobs: int = 1, quiet: bool = False) -> Engine:
    (folder / f"{module}.py").write_text(textwrap.dedent(program))
    (folder / f"test_{module}.py").write_text(TESTS.format(module=module, caps=caps))
    target = Target.from_ref(f"{folder / module}.py::score")
    tests = PytestTests([str(folder / f"test_{module}.py")], rootdir=folder)
    failure = check_failure("test", target.func, "benchmark")
    engine = Engine(jobs=jobs)
    request = Request(target, failure, [], [tests], 1, time.monotonic() + 120, max_candidates=100_000)
    started = time.perf_counter()
    fixes = list(engine.propose(request))
    engine.fixes = [fix.source for fix in fixes]  # type: ignore[attr-defined]
    stats = engine.last_stats
    if quiet:
        return engine
    print(f"  {module}: {stats.evaluated} candidates in {stats.search_seconds:.2f}s = {stats.per_second:.0f}/s "
          f"(localization {stats.localize_seconds * 1000:.0f} ms, batches of {stats.batch}, {len(fixes)} plausible, "
          f"{time.perf_counter() - started:.2f}s in all)")
    if fixes:
        print(f"    best: {fixes[0].operator} — {fixes[0].note}")
    return engine


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # the workers, once reaped
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    print(f"regrow engine benchmark (Python {sys.version.split()[0]}, {os.cpu_count()} CPUs)")
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        sys.path.insert(0, scratch)
        # Capitalised vowels need .lower(): a missing feature, so the whole search space is walked.
        walk = run(folder, "exhaustive", PROGRAM, caps=12)
        run(folder, "single_token", PROGRAM.replace("size >= 5", "size > 5"), caps=10)
        rate = walk.last_stats.per_second
        print(f"throughput: {rate:.0f} candidates/s with one worker (target: 500)")
        print("workers judging at once (the exhaustive walk; single-token bug for the patches):")
        base, patches = 0.0, None
        for jobs in sorted({1, 2, cores()}):
            cpu, children = time.process_time(), _children_cpu()
            walked = run(folder, "exhaustive", PROGRAM, caps=12, jobs=jobs, quiet=True)
            count = max(walked.last_stats.evaluated, 1)
            host_ms, child_ms = (1000 * (time.process_time() - cpu) / count,
                                 1000 * (_children_cpu() - children) / count)
            fixed = run(folder, "single_token", PROGRAM.replace("size >= 5", "size > 5"), caps=10, jobs=jobs,
                        quiet=True)
            per_second = walked.last_stats.per_second
            base = base or per_second
            same = patches is None or fixed.fixes == patches  # type: ignore[attr-defined]
            patches = patches or fixed.fixes  # type: ignore[attr-defined]
            print(f"  {jobs} worker(s): {per_second:.0f} candidates/s = {per_second / base:.2f}x one worker "
                  f"({walked.last_stats.evaluated} candidates; CPU per candidate: host {host_ms:.2f} ms, workers "
                  f"{child_ms:.2f} ms); same patches as one worker: {same}")
        print(f"  (load average {os.getloadavg()[0]:.1f} on {cores()} cores: other work on the machine takes "
              "the cores the workers would use)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
