"""Overhead of @regrow.heal on a healthy call, and at import: decorated vs plain, measured side by side.

Run: .venv/bin/python benchmarks/overhead.py  (or: make bench)

Each round times N calls of each function in turn (interleaved, so drift in CPU speed hits both
alike); the per-call figure is the fastest round (on a shared, loaded machine the minimum is the
cost itself, the median mostly the load), the median beside it. ``healed`` is the default: the function's own
code instrumented (no extra frame); ``wrapped`` is the wrapper @heal falls back to (one extra frame).
Targets: <= 5 ns per healthy call of ``healed`` over ``plain`` (3.11+), and <= 300 us of import time
of CPU per decorated function: a module of 40 small functions imported with @heal, with
@heal(verify=...) (the wrapper) and with a decorator that does nothing, interleaved, each first with
nothing in ``__pycache__`` (cold) and then again as the next process would (warm: the bytecode and
the instrumented code kept there are read back; bytecode is written for this test even under
PYTHONDONTWRITEBYTECODE).
With ``verify=`` (and ``record=``) the arguments are also copied before each call, so that a call
that changes them before it fails is replayed on what the caller passed: the last row shows that
cost for a list of ten small dicts (a deep copy), against the same ``plain`` baseline.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import itertools
import linecache
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import regrow
from regrow._heal import _instrument_code as instrument_code
from regrow._heal._wrapper import make_wrapper


def plain(a, b):
    return a + b


@regrow.heal
def healed(a, b):
    return a + b


def _wrapped_twin(a, b):
    return a + b


wrapped = make_wrapper(_wrapped_twin, regrow.state(healed), None)  # the fallback's shape: one extra frame


@regrow.heal(verify=lambda r: r is not None)
def verified(a, b):
    return a + b


@regrow.heal(verify=lambda r: r is not None)
def verified_rows(rows, b):
    return len(rows) + b


ROWS = [{"id": i, "name": f"row {i}"} for i in range(10)]


def plain_items(n):
    for i in range(n):
        yield i + 1


@regrow.heal
def healed_items(n):
    for i in range(n):
        yield i + 1


def _wrapped_items_twin(n):
    for i in range(n):
        yield i + 1


wrapped_items = make_wrapper(_wrapped_items_twin, regrow.state(healed_items), None)  # the wrapper generators had
ITEMS = 10


def _iterate(fn, n: int) -> float:
    """Nanoseconds per item of making and exhausting generators of ``ITEMS`` items, ``n`` times."""
    start = time.perf_counter_ns()
    for _ in range(n):
        for _ in fn(ITEMS):
            pass
    return (time.perf_counter_ns() - start) / (n * ITEMS)


def _time(fn, n: int) -> float:
    start = time.perf_counter_ns()
    if fn is verified_rows:  # verify= copies the arguments before each call: a list of 10 dicts here
        for _ in range(n):
            fn(ROWS, 2)
    else:
        for i in range(n):
            fn(i, 2)
    return (time.perf_counter_ns() - start) / n


_FUNCTION = '''
{decorator}
{kind} price_{n}(text, rate=1.0, *, strict=False):
    """Parse a price."""
    text = text.strip()
    if text and text[0] in "$€":
        text = text[1:]
    value = float(text.replace(",", "")) * rate
    if strict and value < 0:
        raise ValueError(text)
    {last} round(value, 2)
'''
_SHAPES = {"def": ("def", "return"), "generator": ("def", "yield"), "coroutine": ("async def", "return")}
_serial = itertools.count()


def _module(folder: Path, count: int, decorator: str, shape: str = "def") -> str:
    """A fresh module of ``count`` small functions of ``shape``, each under ``decorator``: its name."""
    name = f"overhead_mod_{next(_serial)}"
    kind, last = _SHAPES[shape]
    text = "import regrow\n\ndef _same(fn):\n    return fn\n\ndef _ok(r):\n    return True\n" + "".join(
        textwrap.dedent(_FUNCTION).format(decorator=decorator, n=n, kind=kind, last=last) for n in range(count))
    (folder / f"{name}.py").write_text(text, encoding="utf-8")
    return name


def _import_time(name: str) -> float:
    """CPU seconds to import module ``name`` as a new process would (its text not in linecache yet)."""
    module = sys.modules.pop(name, None)
    if module is not None:
        linecache.cache.pop(module.__file__ or "", None)
    gc.collect()
    gc.disable()  # a collection is the whole process's, not this import's
    try:
        start = time.process_time()
        importlib.import_module(name)
        return time.process_time() - start
    finally:
        gc.enable()


# label: (decorator, shape, the label of the same module under a decorator that does nothing)
_DECORATORS = {"plain": ("@_same", "def", ""), "@regrow.heal": ("@regrow.heal", "def", "plain"),
               "@regrow.heal(verify=...)": ("@regrow.heal(verify=_ok)", "def", "plain"),
               "plain generators": ("@_same", "generator", ""),
               "@regrow.heal, generators": ("@regrow.heal", "generator", "plain generators"),
               "plain coroutines": ("@_same", "coroutine", ""),
               "@regrow.heal, coroutines": ("@regrow.heal", "coroutine", "plain coroutines")}


def _import_costs(folder: Path, count: int, rounds: int) -> dict[str, float]:
    """Per decorated function, microseconds of CPU beyond the same module with a decorator that does nothing
    (the fastest round of each, as for calls): at the first import (``cold``: no bytecode, no instrumented
    code kept yet) and the next one (``warm``: both kept in ``__pycache__``), interleaved. Plain functions,
    generators and coroutines: on 3.11-3.13 only the first are made from their bytecode (no text compiled)."""
    times: dict[tuple[str, str], list[float]] = {}
    for _ in range(rounds):
        names = {label: _module(folder, count, decorator, shape) for label, (decorator, shape, _) in
                 _DECORATORS.items()}
        for when in ("cold", "warm"):
            for label, name in names.items():
                times.setdefault((label, when), []).append(_import_time(name))
        uncached = _module(folder, count, "@regrow.heal")  # the first import with the cache switched off
        kept = instrument_code.load, instrument_code.keep
        instrument_code.load, instrument_code.keep = (lambda code, space: None), (lambda code, space, made: None)
        try:
            times.setdefault(("@regrow.heal, no cache", "cold"), []).append(_import_time(uncached))
        finally:
            instrument_code.load, instrument_code.keep = kept
        for name in (*names.values(), uncached):
            del sys.modules[name]
    base = {label: _DECORATORS[label][2] if label in _DECORATORS else "plain" for label, _ in times}
    return {f"{label}, {when}": (min(times[label, when]) - min(times[base[label], when])) / count * 1e6
            for label, when in times if base[label]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--functions", type=int, default=40, help="functions per module in the import test")
    args = parser.parse_args()
    samples: dict[str, list[float]] = {"plain": [], "healed": [], "wrapped": [], "healed+verify": [],
                                       "verify, 10 rows": []}
    for _ in range(args.rounds):
        samples["plain"].append(_time(plain, args.calls))
        samples["healed"].append(_time(healed, args.calls))
        samples["wrapped"].append(_time(wrapped, args.calls))
        samples["healed+verify"].append(_time(verified, args.calls))
        samples["verify, 10 rows"].append(_time(verified_rows, args.calls // 10))
    base = min(samples["plain"])
    print(f"{'function':<16}{'ns/call':>10}{'overhead ns':>14}{'ratio':>8}{'median ns':>12}")
    for name, values in samples.items():
        fastest = min(values)
        print(f"{name:<16}{fastest:>10.1f}{fastest - base:>14.1f}{fastest / base:>8.2f}"
              f"{statistics.median(values):>12.1f}")
    overhead = min(samples["healed"]) - base
    mode = regrow.state(healed).mode
    verdict = "meets" if overhead <= 5 else "misses"
    print(f"\n@regrow.heal ({mode}) adds {overhead:.1f} ns per healthy call ({verdict} the 5 ns target; "
          f"Python {sys.version.split()[0]})")
    _generators(args.rounds, args.calls)

    with tempfile.TemporaryDirectory() as folder:
        sys.path.insert(0, folder)
        kept, sys.dont_write_bytecode = sys.dont_write_bytecode, False  # warm imports as a user's are (pyc kept)
        try:
            per = _import_costs(Path(folder), args.functions, max(5, args.rounds // 10))
        finally:
            sys.dont_write_bytecode = kept
            sys.path.remove(folder)
    if sys.version_info >= (3, 12):
        _monitoring(args.rounds // 2, args.calls)
    print()
    for name, cost in per.items():
        print(f"import, {name:<32}{cost:>8.0f} us per function")
    worst = max(cost for name, cost in per.items() if "no cache" not in name)
    cold = per["@regrow.heal, cold"]
    print(f"import: {cold:.0f} us of CPU per decorated function at its first import, {worst:.0f} us at most of "
          f"any row ({'meets' if worst <= 300 else 'misses'} the 300 us target)")


def _generators(rounds: int, calls: int) -> None:
    """Iterating a generator of 10 items: plain, decorated (instrumented: its own frame) and the wrapper."""
    items: dict[str, list[float]] = {"plain generator": [], "healed generator": [], "wrapped generator": []}
    for _ in range(rounds):
        items["plain generator"].append(_iterate(plain_items, calls // ITEMS))
        items["healed generator"].append(_iterate(healed_items, calls // ITEMS))
        items["wrapped generator"].append(_iterate(wrapped_items, calls // ITEMS))
    base = min(items["plain generator"])
    print(f"\n{'generator':<20}{'ns/item':>10}{'overhead ns':>14}{'ratio':>8}{'median ns':>12}")
    for name, values in items.items():
        print(f"{name:<20}{min(values):>10.1f}{min(values) - base:>14.1f}{min(values) / base:>8.2f}"
              f"{statistics.median(values):>12.1f}")
    print(f"@regrow.heal on a generator ({regrow.state(healed_items).mode}) adds "
          f"{min(items['healed generator']) - base:.1f} ns per item of {ITEMS} (making it included)")


def _monitoring(rounds: int, calls: int) -> None:
    """3.12+: what exception-only ``sys.monitoring`` would cost instead (RAISE is a global event: it cannot be
    scoped to one code object, so every exception raised anywhere in the process reaches the callback)."""
    monitoring = sys.monitoring  # type: ignore[attr-defined]
    tool = next(i for i in range(6) if monitoring.get_tool(i) is None)
    monitoring.use_tool_id(tool, "regrow-overhead")
    monitoring.register_callback(tool, monitoring.events.RAISE, lambda code, offset, exc: None)

    def raiser():
        try:
            raise KeyError(1)
        except KeyError:
            pass

    timed: dict[str, list[float]] = {"plain": [], "plain, RAISE on": [], "raise elsewhere": [],
                                     "raise elsewhere, RAISE on": []}
    try:
        for _ in range(rounds):
            for events, suffix in ((0, ""), (monitoring.events.RAISE, ", RAISE on")):
                monitoring.set_events(tool, events)
                timed["plain" + suffix].append(_time(plain, calls))
                start = time.perf_counter_ns()
                for _ in range(calls // 10):
                    raiser()
                timed["raise elsewhere" + suffix].append((time.perf_counter_ns() - start) / (calls // 10))
    finally:
        monitoring.set_events(tool, 0)
        monitoring.free_tool_id(tool)
    print("\nsys.monitoring, exception-only (a callback that does nothing):")
    for name, values in timed.items():
        print(f"{name:<28}{min(values):>10.1f} ns")


if __name__ == "__main__":
    main()
