"""One side of the peers benchmark, run inside a benchmark venv: ``python probe.py SECTION`` prints one JSON object.

Sections: ``overhead`` (ns per healthy call of a 2-argument function: plain, and each peer installed in
this venv, interleaved in one process), ``sandbox`` (seconds per sandboxed call of ``add(2, 3)``: a bare
fork+exit, each regrow sandbox mode, self-heal's ``SubprocessSandbox``) and ``cache`` (regrow's first and
second repair of the same failure, the second answered from the store) and ``repair`` (a whole repair
through a scripted loopback model, ``probe_repair.py``). Each figure comes with the
baseline measured in the same process; a peer that cannot be imported or used is reported as
``"missing: <reason>"``, never left out. Imports only the standard library at the top: each venv holds
different peers (self-heal's venv holds no regrow).
"""

from __future__ import annotations

import json
import operator
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

Figure = Any  # a float, or the string "missing: <reason>"
PEERS = ("regrow", "healing-agent", "self-heal", "codesuture", "mutmut")
wanted: set[str] = set(PEERS)  # --peers a,b: the peers this venv is meant to hold


def plain(a: int, b: int) -> int:
    return a + b


def _missing(error: BaseException) -> str:
    return f"missing: {type(error).__name__}: {error}"[:300]


# -- healthy-call overhead -----------------------------------------------------------------------------------------


class _NoModel:
    """A self-heal proposer that is never asked: the healthy path never proposes."""

    def propose(self, system: str, user: str) -> str:
        raise AssertionError("a healthy call asked for a proposal")


def _add(a: int, b: int) -> int:
    return a + b


def _copy(fn: Callable[..., int]) -> Callable[..., int]:
    """A fresh function object with ``_add``'s code: each peer decorates its own."""
    import types

    return types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)


def _wrappers() -> dict[str, Callable[..., int] | str]:
    found: dict[str, Callable[..., int] | str] = {}
    try:
        import regrow

        found["regrow"] = regrow.heal(_copy(_add))
    except Exception as error:
        found["regrow"] = _missing(error)
    try:
        import healing_agent

        found["healing-agent"] = healing_agent(_copy(_add))
    except Exception as error:
        found["healing-agent"] = _missing(error)
    try:
        import self_heal

        found["self-heal"] = self_heal.repair(proposer=_NoModel())(_copy(_add))
    except Exception as error:
        found["self-heal"] = _missing(error)
    return {name: fn for name, fn in found.items() if name in wanted}


def _calls_for(fn: Callable[..., int], calls: int, sample_seconds: float = 0.05) -> int:
    """At most ``calls``, fewer for a slow wrapper (self-heal's): about ``sample_seconds`` per sample."""
    probe = _time_calls(fn, 100)
    return max(100, min(calls, int(sample_seconds * 1e9 / max(probe, 1.0))))


def _time_calls(fn: Callable[..., int], calls: int) -> float:
    start = time.perf_counter_ns()
    for i in range(calls):
        fn(i, 2)
    return (time.perf_counter_ns() - start) / calls


def _codesuture() -> tuple[Callable[[], None], Callable[[], None]] | str | None:
    """CodeSuture's tracer hooks the whole interpreter, not a function: install and uninstall it around a round."""
    if "codesuture" not in wanted:
        return None
    if sys.version_info < (3, 12):
        return "missing: CodeSuture needs sys.monitoring (Python 3.12+)"
    try:
        from codesuture import tracer

        tracer.install(dry_run=True, silent=True)
        tracer.uninstall()
        return (lambda: tracer.install(dry_run=True, silent=True)), tracer.uninstall
    except Exception as error:
        return _missing(error)


def overhead(calls: int, rounds: int) -> dict[str, Any]:
    wrappers = _wrappers()
    suture = _codesuture()
    samples: dict[str, list[float]] = {"plain": []}
    samples.update({name: [] for name, fn in wrappers.items() if callable(fn)})
    if isinstance(suture, tuple):
        samples["codesuture"] = []
    counts = {name: _calls_for(fn, calls) for name, fn in wrappers.items() if callable(fn)}
    for _ in range(rounds):
        samples["plain"].append(_time_calls(plain, calls))
        for name, fn in wrappers.items():
            if callable(fn):
                samples[name].append(_time_calls(fn, counts[name]))
        if isinstance(suture, tuple):
            suture[0]()
            try:
                samples["codesuture"].append(_time_calls(plain, calls))
            finally:
                suture[1]()
    rows: dict[str, Figure] = {name: statistics.median(values) for name, values in samples.items()}
    rows.update({name: fn for name, fn in wrappers.items() if isinstance(fn, str)})
    if isinstance(suture, str):
        rows["codesuture"] = suture
    return {"unit": "ns/call", "baseline": "plain", "rows": rows}


# -- sandboxed call latency ----------------------------------------------------------------------------------------


def _bare_fork() -> int:
    pid = os.fork()
    if pid == 0:
        os._exit(5)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def _median_seconds(call: Callable[[], object], count: int, warmup: int = 3) -> float:
    for _ in range(warmup):
        call()
    values = []
    for _ in range(count):
        started = time.perf_counter()
        outcome = call()
        values.append(time.perf_counter() - started)
        if getattr(outcome, "value", outcome) != 5:
            raise RuntimeError(f"wrong result from a sandbox: {outcome!r}")
    return statistics.median(values)


def _regrow_modes(count: int) -> dict[str, Figure]:
    try:
        from regrow._sandbox import ForkSandbox, InProcessSandbox, Limits, PoolSandbox
    except Exception as error:
        return {"regrow": _missing(error)}
    limits = Limits(timeout=5.0)
    rows: dict[str, Figure] = {}
    inprocess = InProcessSandbox(limits)
    try:
        rows["regrow inprocess"] = _median_seconds(lambda: inprocess.call(operator.add, 2, 3), count)
    finally:
        inprocess.close()
    modes: dict[str, Callable[[], Any]] = {
        "regrow fork": lambda: ForkSandbox(limits),
        "regrow fork (server)": lambda: ForkSandbox(limits, server=True),
        "regrow pool": lambda: PoolSandbox(workers=2, limits=limits),
    }
    for name, make in modes.items():
        try:
            with make() as box:
                rows[name] = _median_seconds(lambda: box.call(operator.add, 2, 3), count)
        except Exception as error:
            rows[name] = _missing(error)
    return rows


def _self_heal_sandbox(count: int) -> Figure:
    try:
        from self_heal.sandbox import SubprocessSandbox

        box = SubprocessSandbox(timeout=30.0)
        source = "def add(a, b):\n    return a + b\n"
        return _median_seconds(lambda: box.run(source, "add", (2, 3), {}), count)
    except Exception as error:
        return _missing(error)


def sandbox(count: int) -> dict[str, Any]:
    rows: dict[str, Figure] = {"fork+exit (bare)": _median_seconds(_bare_fork, count)}
    if "regrow" in wanted:
        rows.update(_regrow_modes(count))
    if "self-heal" in wanted:
        rows["self-heal subprocess"] = _self_heal_sandbox(max(5, count // 10))
    return {"unit": "s/call", "baseline": "fork+exit (bare)", "rows": rows}


# -- the cache hit -------------------------------------------------------------------------------------------------


def cache() -> dict[str, Any]:
    """regrow's repair of a one-token bug, then the same failure again: the second is answered from the store."""
    try:
        import regrow
    except Exception as error:
        return {"unit": "s/repair", "baseline": "first repair", "rows": {"regrow": _missing(error)}}

    namespace: dict[str, Any] = {}
    folder = tempfile.mkdtemp(prefix="regrow-peers-")
    path = os.path.join(folder, "buggy.py")
    source = "def middle(values):\n    return sorted(values)[len(values) // 2 + 1]\n"
    with open(path, "w") as handle:
        handle.write(source)
    exec(compile(source, path, "exec"), namespace)  # the benchmark's own one-token bug, from a real file
    buggy = namespace["middle"]

    def test(fn: Callable[..., Any]) -> None:
        assert fn([3, 1, 2]) == 2
        assert fn([5, 4, 6, 7, 8]) == 6
        # every length pins the fix: the engine abstains when plausible fixes disagree on a derived input
        assert [fn([4, 1, 3, 2]), fn([3, 1]), fn([1]), fn([6, 5, 4, 3, 2, 1])] == [3, 3, 1, 4]

    store = os.path.join(folder, "store.sqlite")
    rows: dict[str, Figure] = {}
    for name in ("first repair", "second repair (cache)"):
        started = time.perf_counter()
        result = regrow.repair(buggy, ([3, 1, 2],), tests=[test], install=False, store=store, jobs=1)
        rows[name] = time.perf_counter() - started if result.ok else f"missing: repair failed: {result.reason}"
    return {"unit": "s/repair", "baseline": "first repair", "rows": rows}


def main() -> None:
    section = sys.argv[1] if len(sys.argv) > 1 else ""
    quick = "--quick" in sys.argv
    for arg in sys.argv:
        if arg.startswith("--peers="):
            wanted.clear()
            wanted.update(name for name in arg.split("=", 1)[1].split(",") if name)
    if section == "overhead":
        out = overhead(calls=20_000 if quick else 200_000, rounds=3 if quick else 15)
    elif section == "sandbox":
        out = sandbox(count=20 if quick else 200)
    elif section == "cache":
        out = cache()
    elif section == "validation":
        from probe_validation import validation

        out = validation(wanted)
    elif section == "repair":
        from probe_repair import repair

        out = repair(wanted)
    else:
        raise SystemExit(
            f"usage: probe.py overhead|sandbox|cache|repair|validation [--quick] [--peers=a,b] (not {section!r})"
        )
    out["python"] = sys.version.split()[0]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
