"""Per-call latency of each sandbox mode for a small function, side by side in one run.

The baseline is what the predecessors did: a fresh ``python -I`` subprocess per call. Beside the
fork sandbox stands a bare ``os.fork()`` + ``os._exit(0)`` + ``waitpid`` of the same process: the
floor that forking this process costs, whatever the guard does; and again with its scratch folder
on disk rather than a private tmpfs (what the tmpfs costs, as root). The fork sandbox runs again in a
host with three threads logging to a file the whole time (a web worker), beside a bare fork in that same
host: every call must still return, and the threads' cost shows. Each fork mode is reported as a ratio
to the bare fork measured in the same host state in the same run (target: at most 1.5x); the two are
timed in alternating blocks of ten calls, so that other work starting or stopping on the machine
weighs on both alike. Page faults and CPU per call (host and children) are counted in separate passes.

    python benchmarks/sandbox.py [--quick]
"""

from __future__ import annotations

import argparse
import logging
import operator
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

from regrow._sandbox import ForkSandbox, InProcessSandbox, Limits, PoolSandbox

LIMITS = Limits(timeout=5.0)
ON_DISK = Limits(timeout=5.0, scratch_bytes=None)
TARGETS = {"inprocess": 50e-6, "fork": 2e-3, "fork (server)": 5e-3, "pool": 5e-3}  # pool: a fork per call
RATIO_TARGET = 1.5  # a fork mode's median against a bare fork+exit measured in the same host state, same run
BARE_OF = {"fork (3 logging threads)": "fork+exit (bare, 3 logging threads)"}  # the rest: "fork+exit (bare)"


class logging_threads:
    """``count`` threads logging to a file as fast as they can, for the duration of a ``with`` block."""

    def __init__(self, count: int) -> None:
        self.stop = threading.Event()
        self.log = logging.getLogger("benchmark.web")
        self.log.propagate = False
        self.log.setLevel(logging.INFO)
        self.folder = tempfile.TemporaryDirectory()
        self.log.addHandler(logging.FileHandler(os.path.join(self.folder.name, "web.log")))
        self.threads = [threading.Thread(target=self.chatter, args=(n,), daemon=True) for n in range(count)]

    def chatter(self, n: int) -> None:
        while not self.stop.is_set():
            self.log.info("worker %d handled a request", n)

    def __enter__(self) -> None:
        for thread in self.threads:
            thread.start()

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join()
        for handler in self.log.handlers:
            handler.close()
        self.folder.cleanup()


def measure(call: Callable[[], object], count: int, warmup: int = 3) -> list[float]:
    for _ in range(warmup):
        call()
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        call()
        samples.append(time.perf_counter() - started)
    return samples


def interleaved(calls: dict[str, Callable[[], object]], count: int, block: int = 10) -> dict[str, list[float]]:
    """Per-call times of several modes, ``count`` each, measured in alternating blocks of ``block`` calls: a
    load that moves during the run moves them all alike, so their ratios hold (the targets are ratios)."""
    samples: dict[str, list[float]] = {mode: [] for mode in calls}
    for call in calls.values():
        measure(call, 0)  # the warm-up calls
    while (done := len(next(iter(samples.values())))) < count:
        for mode, call in calls.items():
            samples[mode] += measure(call, min(block, count - done), warmup=0)
    return samples


def checked(call: Callable[[], object]) -> Callable[[], object]:
    """Fail loudly if a mode stops returning the right answer: a fast wrong sandbox is no result."""

    def run() -> object:
        outcome = call()
        value = getattr(outcome, "value", outcome)
        if value != 5:
            raise SystemExit(f"wrong result: {outcome!r}")
        return outcome

    return run


def bare_fork() -> int:
    """Fork, exit at once, reap: what the kernel charges for a copy of this process."""
    pid = os.fork()
    if pid == 0:
        os._exit(5)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def baseline() -> int:
    code = "import operator; print(operator.add(2, 3))"
    return int(subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, check=True, text=True).stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls per mode")
    scale = 0.2 if parser.parse_args().quick else 1.0
    runs: dict[str, list[float]] = {"python -I (baseline)": measure(checked(baseline), max(5, int(30 * scale)))}
    faults: dict[str, tuple[float, ...]] = {}

    inprocess = InProcessSandbox(LIMITS)
    runs["inprocess"] = measure(checked(lambda: inprocess.call(operator.add, 2, 3)), int(5000 * scale))
    inprocess.close()

    calls = int(300 * scale)
    with ForkSandbox(LIMITS) as fork, ForkSandbox(ON_DISK) as on_disk:  # on disk: no private scratch tmpfs (as
        runs |= interleaved({"fork+exit (bare)": checked(bare_fork),  # without root)
                             "fork": checked(lambda: fork.call(operator.add, 2, 3)),
                             "fork (scratch on disk)": checked(lambda: on_disk.call(operator.add, 2, 3))}, calls)
    with ForkSandbox(LIMITS) as fork, logging_threads(3):
        runs |= interleaved({"fork+exit (bare, 3 logging threads)": checked(bare_fork),
                             "fork (3 logging threads)": checked(lambda: fork.call(operator.add, 2, 3))}, calls)
    with counted(faults, "fork+exit (bare)", calls):  # each alone: the children's counts are read once reaped
        measure(checked(bare_fork), calls)
    with counted(faults, "fork", calls), ForkSandbox(LIMITS) as fork:
        measure(checked(lambda: fork.call(operator.add, 2, 3)), calls)
    with ForkSandbox(LIMITS, server=True) as server:
        runs["fork (server)"] = measure(checked(lambda: server.call(operator.add, 2, 3)), int(300 * scale))
    with PoolSandbox(workers=2, limits=LIMITS) as pool:
        runs["pool"] = measure(checked(lambda: pool.call(operator.add, 2, 3)), int(3000 * scale), warmup=20)

    report(runs)
    for mode, (host, children, host_cpu, child_cpu) in faults.items():  # steadier than time on a busy machine
        print(f"per call, {mode}: page faults host {host:.0f}, child {children:.0f}; "
              f"CPU host {_fmt(host_cpu)}, child {_fmt(child_cpu)}")


class counted:
    """Page faults and CPU time per call of the host and of its (reaped) children over a ``with`` block, into
    ``into[mode]``: (host faults, child faults, host CPU seconds, child CPU seconds)."""

    def __init__(self, into: dict[str, tuple[float, ...]], mode: str, calls: int, warmup: int = 3) -> None:
        self.into, self.mode, self.calls = into, mode, calls + warmup

    @staticmethod
    def now() -> tuple[float, ...]:
        own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return (own.ru_minflt, children.ru_minflt, own.ru_utime + own.ru_stime,
                children.ru_utime + children.ru_stime)

    def __enter__(self) -> None:
        self.start = self.now()

    def __exit__(self, *exc: object) -> None:  # after the sandbox's close: every child reaped
        end = self.now()
        self.into[self.mode] = tuple((after - before) / self.calls for before, after in zip(self.start, end,
                                                                                           strict=True))


def report(runs: dict[str, list[float]]) -> None:
    base = statistics.mean(runs["python -I (baseline)"])
    python = f"{sys.implementation.name} {sys.version.split()[0]}"
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"per-call latency of operator.add(2, 3); {python}, {os.cpu_count()} CPUs, load average {load:.1f}")
    print(f"{'mode':<36}{'calls':>7}{'mean':>12}{'median':>12}{'target':>10}{'vs baseline':>13}{'vs bare fork':>14}")
    for mode, samples in runs.items():
        mean, median = statistics.mean(samples), statistics.median(samples)
        target = TARGETS.get(mode)
        mark = "" if target is None else (" ok" if median <= target else " MISS")
        ratio = ""
        if mode.startswith("fork (") or mode == "fork":
            times = median / statistics.median(runs[BARE_OF.get(mode, "fork+exit (bare)")])
            ratio = f"{times:.2f}x" + (" ok" if times <= RATIO_TARGET else " MISS")
        print(
            f"{mode:<36}{len(samples):>7}{_fmt(mean):>12}{_fmt(median):>12}"
            f"{_fmt(target) if target else '-':>10}{base / mean:>12.0f}x{mark:<5}{ratio:>12}"
        )


def _fmt(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} us"
    return f"{seconds * 1e3:.2f} ms"


if __name__ == "__main__":
    main()
